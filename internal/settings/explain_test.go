package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// Explain names, for each key, the effective value and the layer it came
// from: flag over environment over file over default, the file with its
// line, so `starter settings` can show why retry is off.
func TestExplain_ValueAndOrigin(t *testing.T) {
	file := writeYAML(t, "# persisted by set-auto-retry off\nretry:\n  enabled: false\n  maxRetries: 5\nmodel:\n  name: from-file\nsession:\n  postgresUrl: postgres://u:hunter2@db/x\n")
	home := t.TempDir()
	newEnv(t, map[string]string{
		"DURABLE_AGENT_HOME":              home,
		"DURABLE_AGENT_RETRY_MAXRETRIES":  "7",
		"TEMPORAL_ADDRESS":                "10.0.0.1:7233",
		"DURABLE_AGENT_MODEL_MAXTOKENS":   "1000",
		"DURABLE_AGENT_RETRY_BASEDELAYMS": "100",
	})
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	AddFlags(fs)
	if err := fs.Parse([]string{"--retry.baseDelayMs", "250"}); err != nil {
		t.Fatal(err)
	}
	s, vals, err := Explain(LoadOptions{File: file, Flags: fs})
	if err != nil {
		t.Fatal(err)
	}
	if s.Retry.Enabled || s.Retry.BaseDelayMs != 250 {
		t.Fatalf("settings %+v do not match the layers", s.Retry)
	}
	got := map[string]Value{}
	for _, v := range vals {
		got[v.Key] = v
	}
	if len(vals) != len(Keys()) {
		t.Fatalf("%d values for %d keys", len(vals), len(Keys()))
	}
	for _, tc := range []struct {
		key, value, origin, from string
	}{
		{"retry.enabled", "false", OriginFile, file + ":3"},
		{"retry.maxRetries", "7", OriginEnv, "DURABLE_AGENT_RETRY_MAXRETRIES"},
		{"retry.baseDelayMs", "250", OriginFlag, "--retry.baseDelayMs"},
		{"model.name", "from-file", OriginFile, file + ":6"},
		{"model.maxTokens", "1000", OriginEnv, "DURABLE_AGENT_MODEL_MAXTOKENS"},
		{"temporal.address", "10.0.0.1:7233", OriginEnv, "TEMPORAL_ADDRESS"},
		{"dataDir", home, OriginEnv, "DURABLE_AGENT_HOME"},
		{"compaction.keepRecentTokens", "20000", OriginDefault, ""},
		{"tools.enabled", "read;write;edit;bash;grep;find;ls", OriginDefault, ""},
		{"session.postgresUrl", "postgres://u:xxxxx@db/x", OriginFile, file + ":8"},
	} {
		v := got[tc.key]
		if v.Value != tc.value || v.Kind != tc.origin || v.From != tc.from {
			t.Errorf("%s = %q from %s %q, want %q from %s %q", tc.key, v.Value, v.Kind, v.From, tc.value, tc.origin, tc.from)
		}
	}
	for _, v := range vals {
		if strings.Contains(v.Value, "hunter2") {
			t.Fatalf("%s shows the database password: %q", v.Key, v.Value)
		}
	}
}

// Without DURABLE_AGENT_HOME the data dir is a default, and a bad value
// fails Explain the way it fails Load.
func TestExplain_DefaultsAndErrors(t *testing.T) {
	newEnv(t, nil)
	_, vals, err := Explain(LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vals {
		if v.Origin != (Origin{Kind: OriginDefault}) || v.Origin.String() != "default" {
			t.Fatalf("%s: origin %+v with nothing set", v.Key, v.Origin)
		}
	}
	newEnv(t, map[string]string{"DURABLE_AGENT_RETRY_MAXRETRIES": "-1"})
	if _, _, err := Explain(LoadOptions{}); err == nil || !strings.Contains(err.Error(), "retry.maxRetries") {
		t.Fatalf("bad value: %v", err)
	}
}

// NoDefaultFile (the demo) reads neither <dataDir>/settings.yaml nor
// $DURABLE_AGENT_CONFIG, so a persisted retry.enabled: false cannot reach
// it; a file named by --config is still read, and so is the environment.
func TestLoad_NoDefaultFileIgnoresPersistedValues(t *testing.T) {
	home := t.TempDir()
	persisted := "retry:\n  enabled: false\ncompaction:\n  enabled: false\n"
	if err := writeFileIn(home, FileName, persisted); err != nil {
		t.Fatal(err)
	}
	other := writeYAML(t, persisted)
	for _, tc := range []struct {
		name    string
		vars    map[string]string
		args    []string
		enabled bool
	}{
		{"default file", nil, nil, true},
		{"file named by the environment", map[string]string{EnvConfig: other}, nil, true},
		{"file named by --config", nil, []string{"--config", other}, false},
		{"environment", map[string]string{"DURABLE_AGENT_RETRY_ENABLED": "false"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{EnvHome: home}
			for k, v := range tc.vars {
				vars[k] = v
			}
			newEnv(t, vars)
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			s, err := Load(LoadOptions{Flags: fs, NoDefaultFile: true})
			if err != nil {
				t.Fatal(err)
			}
			if s.Retry.Enabled != tc.enabled {
				t.Fatalf("retry.enabled = %t, want %t", s.Retry.Enabled, tc.enabled)
			}
			// Without NoDefaultFile the persisted value applies.
			if s, err := Load(LoadOptions{Flags: fs}); err != nil || s.Retry.Enabled {
				t.Fatalf("Load without NoDefaultFile: retry.enabled %t, %v", s.Retry.Enabled, err)
			}
		})
	}
}

func writeFileIn(dir, name, content string) error {
	return os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600)
}
