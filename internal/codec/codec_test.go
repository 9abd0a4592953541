package codec

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/durableagent/durableagent/internal/settings"
)

func material(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func mustKey(t *testing.T, id string, b byte) Key {
	t.Helper()
	k, err := NewKey(id, material(b))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func jsonPayload(t *testing.T, v any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Encode then Decode gives back every payload exactly, metadata included;
// the sealed form names the key id and holds no plaintext.
func TestCodec_RoundTripAndMetadata(t *testing.T) {
	c := New(mustKey(t, "k1", 1))
	cases := []struct {
		name string
		p    *commonpb.Payload
	}{
		{"json string", jsonPayload(t, "fix the failing test in parser.go")},
		{"json struct", jsonPayload(t, map[string]any{"sessionId": "s1", "message": "hello secret world"})},
		{"nil value", jsonPayload(t, nil)},
		{"empty data with metadata", &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("binary/plain")}}},
		{"binary", &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("binary/plain")}, Data: []byte{0, 1, 2, 255}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := c.Encode([]*commonpb.Payload{tc.p})
			if err != nil {
				t.Fatal(err)
			}
			md := enc[0].GetMetadata()
			if string(md[MetadataEncoding]) != EncodingEncrypted || string(md[MetadataKeyID]) != "k1" || len(md) != 2 {
				t.Errorf("metadata %q, want only encoding %s and key id k1", md, EncodingEncrypted)
			}
			if len(tc.p.GetData()) > 3 && bytes.Contains(enc[0].GetData(), tc.p.GetData()) {
				t.Errorf("sealed data contains the plaintext")
			}
			dec, err := c.Decode(enc)
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(dec[0], tc.p) {
				t.Errorf("round trip gave %v, want %v", dec[0], tc.p)
			}
		})
	}
}

// Sealing the same payload twice gives different ciphertexts (a fresh
// nonce each time), so equal inputs are not recognisable in history.
func TestCodec_FreshNonceEveryEncode(t *testing.T) {
	c := New(mustKey(t, "k1", 1))
	p := jsonPayload(t, "same")
	a, _ := c.Encode([]*commonpb.Payload{p})
	b, _ := c.Encode([]*commonpb.Payload{p})
	if bytes.Equal(a[0].Data, b[0].Data) {
		t.Fatal("two encodings of one payload are identical")
	}
}

// Decoding fails clearly, never silently: wrong key under the same id,
// unknown id, tampered or truncated data. Unencrypted payloads pass.
func TestCodec_DecodeFailures(t *testing.T) {
	sealer := New(mustKey(t, "k1", 1))
	sealed, err := sealer.Encode([]*commonpb.Payload{jsonPayload(t, "hello")})
	if err != nil {
		t.Fatal(err)
	}
	tampered := proto.Clone(sealed[0]).(*commonpb.Payload)
	tampered.Data[len(tampered.Data)-1] ^= 1
	truncated := proto.Clone(sealed[0]).(*commonpb.Payload)
	truncated.Data = truncated.Data[:5]
	swappedID := proto.Clone(sealed[0]).(*commonpb.Payload)
	swappedID.Metadata[MetadataKeyID] = []byte("k2")

	cases := []struct {
		name    string
		codec   *Codec
		p       *commonpb.Payload
		want    error
		wantMsg string
	}{
		{"wrong key same id", New(mustKey(t, "k1", 2)), sealed[0], ErrWrongKey, `key id "k1"`},
		{"unknown key id", New(mustKey(t, "k9", 1)), sealed[0], ErrUnknownKey, `"k1" (this codec has key id "k9")`},
		{"tampered data", sealer, tampered, ErrWrongKey, "tampered"},
		{"truncated data", sealer, truncated, ErrWrongKey, "only 5 bytes"},
		{"key id swapped in metadata", New(mustKey(t, "k2", 1)), swappedID, ErrWrongKey, `key id "k2"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.codec.Decode([]*commonpb.Payload{tc.p})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode error %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tc.wantMsg)
			}
		})
	}

	plain := jsonPayload(t, "written before the key existed")
	got, err := sealer.Decode([]*commonpb.Payload{plain})
	if err != nil || !proto.Equal(got[0], plain) {
		t.Fatalf("plain payload: got %v, %v; want it unchanged", got, err)
	}
}

// Through the SDK's CodecDataConverter, values round-trip and the
// converted payload is sealed.
func TestDataConverter_RoundTrip(t *testing.T) {
	dc := New(mustKey(t, "k1", 1)).DataConverter()
	p, err := dc.ToPayload(map[string]string{"message": "top secret prompt"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(p.Data), "top secret") || string(p.Metadata[MetadataEncoding]) != EncodingEncrypted {
		t.Fatalf("payload not sealed: %v", p)
	}
	var back map[string]string
	if err := dc.FromPayload(p, &back); err != nil || back["message"] != "top secret prompt" {
		t.Fatalf("FromPayload = %v, %v", back, err)
	}
}

// Keys parse from 32 raw bytes or base64 in any common form; anything
// else fails with ErrBadKey without echoing the text.
func TestParseKey(t *testing.T) {
	raw := []byte("0123456789abcdef0123456789ABCDEF")
	std := base64.StdEncoding.EncodeToString(raw)
	cases := []struct {
		name string
		text string
		ok   bool
	}{
		{"raw 32 bytes", string(raw), true},
		{"base64", std, true},
		{"base64 with newline", std + "\n", true},
		{"base64 unpadded", base64.RawStdEncoding.EncodeToString(raw), true},
		{"base64 url alphabet", base64.URLEncoding.EncodeToString(material(0xfb)), true},
		{"16 bytes of base64", base64.StdEncoding.EncodeToString(raw[:16]), false},
		{"31 raw bytes", string(raw[:31]), false},
		{"not base64", "this is not a key at all, it is a sentence", false},
		{"empty", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, err := ParseKey("id", []byte(tc.text))
			if tc.ok {
				if err != nil || k.id != "id" {
					t.Fatalf("ParseKey = %v, %v", k, err)
				}
				return
			}
			if !errors.Is(err, ErrBadKey) {
				t.Fatalf("ParseKey error %v, want ErrBadKey", err)
			}
			if len(tc.text) > 0 && strings.Contains(err.Error(), strings.TrimSpace(tc.text)) {
				t.Errorf("error %q echoes the key text", err)
			}
		})
	}
	if s := mustKey(t, "prod", 7).String(); s != "codec key prod" {
		t.Errorf("Key.String() = %q", s)
	}
}

// LoadKey reads the file or the variable (not both); nothing configured
// means no codec; errors never print the key.
func TestLoadKey_Sources(t *testing.T) {
	key64 := base64.StdEncoding.EncodeToString(material(3))
	dir := t.TempDir()
	good := filepath.Join(dir, "good.key")
	bad := filepath.Join(dir, "bad.key")
	if err := os.WriteFile(good, []byte(key64+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("c2hvcnQ="), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(v string) func(string) (string, bool) {
		return func(name string) (string, bool) {
			if name == settings.EnvCodecKey && v != "" {
				return v, true
			}
			return "", false
		}
	}
	cases := []struct {
		name    string
		file    string
		env     string
		wantKey bool
		wantErr string
	}{
		{name: "nothing configured", wantKey: false},
		{name: "key file", file: good, wantKey: true},
		{name: "environment", env: key64, wantKey: true},
		{name: "both", file: good, env: key64, wantErr: "both codec.keyFile and DURABLE_AGENT_CODEC_KEY"},
		{name: "bad environment", env: "c2hvcnQ=", wantErr: "from DURABLE_AGENT_CODEC_KEY"},
		{name: "bad file", file: bad, wantErr: "from " + bad},
		{name: "missing file", file: filepath.Join(dir, "absent.key"), wantErr: "absent.key"},
		{name: "key given as the path", file: key64, wantErr: "looks like a key, not a path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, err := LoadKey(settings.Codec{KeyFile: tc.file, KeyID: "default"}, env(tc.env))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("LoadKey error %v, want one containing %q", err, tc.wantErr)
				}
				for _, secret := range []string{key64, "c2hvcnQ="} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error %q prints key material", err)
					}
				}
				return
			}
			if err != nil || (k != nil) != tc.wantKey {
				t.Fatalf("LoadKey = %v, %v; want key %v", k, err, tc.wantKey)
			}
			if k != nil && k.id != "default" {
				t.Errorf("key id %q, want default", k.id)
			}
		})
	}
}
