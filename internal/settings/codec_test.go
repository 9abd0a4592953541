package settings

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A base64 AES-256 key used as a value that must never be echoed.
const secretKey = "c2VjcmV0LWtleS1tYXRlcmlhbC0zMi1ieXRlcyEhISE="

// SPEC 8 for the codec group: bad codec values are rejected at start with
// one line naming the key, and key material is never echoed.
func TestLoad_CodecKeysRejectedWithKeyAndNoKeyMaterial(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		env     map[string]string
		args    []string
		want    []string
		notWant string
	}{
		{name: "empty keyId in file", file: "codec:\n  keyId: \"\"\n",
			want: []string{"codec.keyId: must not be empty", "settings.yaml:2"}},
		{name: "keyId with a space", file: "codec:\n  keyId: \"my key\"\n",
			want: []string{"codec.keyId", `"my key"`, "letters, digits"}},
		{name: "keyId too long", args: []string{"--codec.keyId=" + strings.Repeat("k", 65)},
			want: []string{"codec.keyId", "at most 64 characters", "flag --codec.keyId"}},
		{name: "keyId with a slash in env", env: map[string]string{"DURABLE_AGENT_CODEC_KEYID": "a/b"},
			want: []string{"codec.keyId", `"a/b"`, "environment DURABLE_AGENT_CODEC_KEYID"}},
		{name: "misspelt key variable does not echo the key", env: map[string]string{"DURABLE_AGENT_CODEC_KEYS": secretKey},
			want: []string{"unknown environment variable DURABLE_AGENT_CODEC_KEYS", "did you mean"}, notWant: secretKey},
		{name: "key placed in the file is unknown and not echoed", file: "codec:\n  key: " + secretKey + "\n",
			want: []string{`unknown key "codec.key"`}, notWant: secretKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := ""
			if c.file != "" {
				path = writeYAML(t, c.file)
			}
			_, err := load(t, path, newEnv(t, c.env), c.args...)
			if err == nil {
				t.Fatalf("Load succeeded, want an error containing %q", c.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "settings: ") || strings.ContainsAny(msg, "\r\n") {
				t.Errorf("message is not one line starting with \"settings: \": %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not contain %q", msg, w)
				}
			}
			if c.notWant != "" && strings.Contains(msg, c.notWant) {
				t.Errorf("message %q echoes %q", msg, c.notWant)
			}
		})
	}
}

// The key variable is accepted (not an unknown DURABLE_AGENT_ variable)
// but never read into Settings, so printing the settings cannot leak it;
// codec.keyFile expands "~" like dataDir.
func TestLoad_CodecKeyVariableAcceptedButNotStored(t *testing.T) {
	env := newEnv(t, map[string]string{EnvCodecKey: secretKey, "DURABLE_AGENT_CODEC_KEYFILE": "~/keys/codec.key"})
	s, err := load(t, "", env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if want := filepath.Join(env["HOME"], "keys", "codec.key"); s.Codec.KeyFile != want {
		t.Errorf("codec.keyFile = %q, want %q", s.Codec.KeyFile, want)
	}
	if s.Codec.KeyID != DefaultCodecKeyID {
		t.Errorf("codec.keyId = %q, want %q", s.Codec.KeyID, DefaultCodecKeyID)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secretKey) {
		t.Errorf("settings JSON holds the key: %s", b)
	}
	for _, k := range Keys() {
		if strings.Contains(k.Default, secretKey) {
			t.Errorf("key %s shows the key material", k.Key)
		}
	}
}
