package activities

import (
	"strings"
	"testing"
)

// Secrets never leave the activity (SPEC 7): the credential in use is
// masked wherever a provider's error text echoes it, and key-shaped
// tokens (sk-...) are masked even when they are not the credential in use
// (a proxy echoing its own upstream key). The texts are shaped after real
// echoes (retry/testdata/errors.jsonl).
func TestRedact_EchoedKeys(t *testing.T) {
	const (
		openaiKey = "sk-proj-Q2bT0123456789abcdefGHIJ"
		groqKey   = "gsk_0123456789abcdefghijklmnopqrstuv"
		googleKey = "AIzaSyA-0123456789abcdefghijklmnopqrs"
		xaiKey    = "xai-0123456789abcdefghijklmnopqrstuvwx"
	)
	cases := []struct {
		name, text, secret string
		gone               []string // must not survive
		kept               []string // must survive (the rest of the message)
	}{
		{
			name:   "openai 401 body",
			text:   `401 Unauthorized {"message":"Incorrect API key provided: ` + openaiKey + `. You can find your API key at https://platform.openai.com/account/api-keys.","code":"invalid_api_key"}`,
			secret: openaiKey, gone: []string{openaiKey, "Q2bT0123456789"}, kept: []string{"Incorrect API key provided", "invalid_api_key"},
		},
		{
			name: "sk key that is not the credential in use", text: "upstream said: Incorrect API key provided: sk-or-v1-0123456789abcdef. check it",
			gone: []string{"0123456789abcdef"}, kept: []string{"Incorrect API key provided", "check it"},
		},
		{
			name: "anthropic key in a header dump", text: "Authorization: Bearer sk-ant-api03-0123456789abcdef rejected",
			gone: []string{"0123456789abcdef"}, kept: []string{"rejected"},
		},
		{
			name: "groq key in a query parameter", text: `GET "https://api.example.test/v1/models?api_key=` + groqKey + `": 401 Unauthorized`,
			secret: groqKey, gone: []string{groqKey}, kept: []string{"401 Unauthorized", "api_key="},
		},
		{
			name: "google key in backticks", text: "API key `" + googleKey + "` not valid. Please pass a valid API key.",
			secret: googleKey, gone: []string{googleKey}, kept: []string{"not valid"},
		},
		{
			name: "xai key twice", text: "Incorrect API key provided: " + xaiKey + " (" + xaiKey + ")",
			secret: xaiKey, gone: []string{xaiKey}, kept: []string{"Incorrect API key provided"},
		},
		{
			name: "masked echo is left alone", text: "400 \"Incorrect API key provided: gs***tF. You can obtain an API key from https://console.x.ai.\"",
			kept: []string{"gs***tF", "console.x.ai"},
		},
		{
			name: "no key at all", text: `529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			secret: openaiKey, kept: []string{`529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		},
		{
			name: "short secret is not masked", text: "max_tokens 1234 rejected", secret: "1234",
			kept: []string{"max_tokens 1234 rejected"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Redact(tc.text, tc.secret)
			for _, g := range tc.gone {
				if strings.Contains(got, g) {
					t.Fatalf("Redact left %q in %q", g, got)
				}
			}
			for _, k := range tc.kept {
				if !strings.Contains(got, k) {
					t.Fatalf("Redact removed %q: %q", k, got)
				}
			}
			if len(tc.gone) > 0 && !strings.Contains(got, "[redacted]") {
				t.Fatalf("Redact(%q) = %q, want a [redacted] marker where the key was", tc.text, got)
			}
			if again := Redact(got, tc.secret); again != got {
				t.Fatalf("Redact is not idempotent: %q then %q", got, again)
			}
		})
	}
	if Redact("", openaiKey) != "" {
		t.Fatal("Redact of an empty text is not empty")
	}
}
