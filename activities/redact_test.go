package activities

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/retry"
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

// Secrets never leave the activity (SPEC 7), even when they are not the
// credential in use: every provider key shape (Anthropic sk-ant-, OpenAI
// sk- and sk-proj-, OpenRouter sk-or-, Groq gsk_, Google AIza, xAI xai-),
// bearer tokens, api_key=/key= values and tokens quoted in backticks or
// brackets are masked; ordinary words, model names, request ids, retry
// hints and already masked echoes are left as they are.
func TestRedact_KeyShapes(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"anthropic", "invalid x-api-key: sk-ant-api03-AbC0123456789xyzXYZ-_q", "invalid x-api-key: sk-[redacted]"},
		{"openai project", "Incorrect API key provided: sk-proj-AbCdEf0123456789.", "Incorrect API key provided: sk-[redacted]."},
		{"openai legacy", "key sk-0123456789abcdefABCDEF is revoked", "key sk-[redacted] is revoked"},
		{"openrouter", `{"error":{"message":"User not found: sk-or-v1-0123456789abcdef0123","code":401}}`, `{"error":{"message":"User not found: sk-[redacted]","code":401}}`},
		{"underscore sk", "bad credential sk_live_0123456789abcdef", "bad credential sk_[redacted]"},
		{"groq", "Invalid API Key gsk_0123456789abcdefghijklmn", "Invalid API Key gsk_[redacted]"},
		{"google", "API key not valid: AIzaSyA-0123456789abcdefghijklmnopqrs.", "API key not valid: AIza[redacted]."},
		{"xai", "Incorrect API key provided: xai-0123456789abcdefghijKLMNOP", "Incorrect API key provided: xai-[redacted]"},
		{"bearer oauth token", "Authorization: Bearer ya29.a0AfH6SMBx3-0123456789 rejected", "Authorization: Bearer [redacted] rejected"},
		{"bearer jwt", "bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc123 expired", "bearer [redacted] expired"},
		{"api_key in a query", `GET "https://x.test/v1/models?api_key=f00dfeed0123456789&model=m": 401`, `GET "https://x.test/v1/models?api_key=[redacted]&model=m": 401`},
		{"key in a query", "https://x.test/v1beta/models?key=abcdef0123456789: 400", "https://x.test/v1beta/models?key=[redacted]: 400"},
		{"api_key in JSON", `{"api_key": "tgp_v1_abc123def456"}`, `{"api_key": "[redacted]"}`},
		{"token in backticks", "token `AbCdEfGh0123456789XyZ` rejected", "token `[redacted]` rejected"},
		{"token in brackets", "credential [Zx9Qw8Er7Ty6Ui5Op4] is revoked", "credential [[redacted]] is revoked"},
		{"exact secret without a shape", "upstream rejected opaque-credential-value here", "upstream rejected [redacted] here"},
	}
	unchanged := []string{
		"skip-list corrupted",
		"task-123 failed",
		"risk-free retry",
		"disk_0123456789abcdef is full",
		"Incorrect API key provided: sk-xxxxxx.",
		"Incorrect API key provided: sk-PMafP***********************************",
		"400 \"Incorrect API key provided: gs***tF. You can obtain an API key from https://console.x.ai.\"",
		"Bearer token missing",
		"Authorization: Bearer undefined",
		"API key: invalid",
		"x-api-key header is required",
		"API key not valid. Please pass a valid API key.",
		"model `claude-3-5-sonnet-20241022` not found",
		"model [gpt-4o-2024-08-06] does not exist",
		"529 Overloaded (Request-ID: req_011CSHoEeqs5C35K2UUqR7Fy)",
		"429 Too Many Requests key [redacted] retry-after-ms=2000",
		"monkey=banana",
		"sk-[redacted].",
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			secret := ""
			if tc.name == "exact secret without a shape" {
				secret = "opaque-credential-value"
			}
			got := Redact(tc.in, secret)
			if got != tc.want {
				t.Fatalf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again := Redact(got, secret); again != got {
				t.Fatalf("Redact is not idempotent: %q then %q", got, again)
			}
		})
	}
	for _, text := range unchanged {
		t.Run("unchanged "+text, func(t *testing.T) {
			if got := Redact(text, ""); got != text {
				t.Fatalf("Redact(%q) = %q, want it unchanged", text, got)
			}
		})
	}
}

// Redaction never changes what the retry policy does (SPEC 2): over every
// real error text of the classifier's corpus, as it is and with a key
// echoed into it, the redacted text gets the class and retry hint of the
// original, and the echoed key is gone.
func TestRedact_KeepsClassificationOfCorpus(t *testing.T) {
	f, err := os.Open("../retry/testdata/errors.jsonl")
	if err != nil {
		t.Fatalf("open corpus: %v", err)
	}
	defer f.Close()
	const key = "sk-ant-api03-Zx9Qw8Er7Ty6Ui5Op4As3Df2"
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for line := 1; sc.Scan(); line++ {
		var it struct {
			Text   string `json:"text"`
			Status int    `json:"status"`
			Type   string `json:"type"`
		}
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatalf("corpus line %d: %v", line, err)
		}
		n++
		for _, text := range []string{it.Text, it.Text + " (Authorization: Bearer " + key + ")"} {
			classify := func(s string) retry.Classification {
				c := retry.Classify(retry.Outcome{StopReason: "error", ErrorMessage: s, ErrorStatus: it.Status, ErrorType: it.Type})
				c.Pattern = ""
				return c
			}
			red := Redact(text, "")
			if strings.Contains(red, "Zx9Qw8Er7Ty6") {
				t.Errorf("line %d: key survived: %q", line, red)
			}
			if before, after := classify(text), classify(red); before != after {
				t.Errorf("line %d: redaction changed the classification %+v to %+v\n  before %q\n  after  %q", line, before, after, text, red)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 150 {
		t.Fatalf("read %d corpus texts, want the whole corpus (150+)", n)
	}
}
