package activities

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
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
			got := newMessageRedactor(tc.secret).text(tc.text)
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
			if again := newMessageRedactor(tc.secret).text(got); again != got {
				t.Fatalf("Redact is not idempotent: %q then %q", got, again)
			}
		})
	}
	if newMessageRedactor(openaiKey).text("") != "" {
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
			got := newMessageRedactor(secret).text(tc.in)
			if got != tc.want {
				t.Fatalf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again := newMessageRedactor(secret).text(got); again != got {
				t.Fatalf("Redact is not idempotent: %q then %q", got, again)
			}
		})
	}
	for _, text := range unchanged {
		t.Run("unchanged "+text, func(t *testing.T) {
			if got := Redact(text); got != text {
				t.Fatalf("Redact(%q) = %q, want it unchanged", text, got)
			}
		})
	}
}

// Redaction never changes what the retry policy does (SPEC 2): over every
// real error text of the classifier's corpus, as it is and with a key
// echoed into it, the redacted text gets the class and retry hint of the
// original, and the echoed key is gone.
//
// With -short (CI's race pass, where the classifier's regular expressions
// run about sixteen times slower: 65 s against 4 s) every tenth text
// is checked; `go test ./...` checks them all. The code under test runs
// on one goroutine, so the race detector has nothing more to find in the
// other nine.
func TestRedact_KeepsClassificationOfCorpus(t *testing.T) {
	stride := 1
	if testing.Short() {
		stride = 10
	}
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
		if (line-1)%stride != 0 {
			continue
		}
		for _, text := range []string{it.Text, it.Text + " (Authorization: Bearer " + key + ")"} {
			classify := func(s string) retry.Classification {
				c := retry.Classify(retry.Outcome{StopReason: "error", ErrorMessage: s, ErrorStatus: it.Status, ErrorType: it.Type})
				c.Pattern = ""
				return c
			}
			red := Redact(text)
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

// opaqueSecret has no key shape, so only RedactMessage's knowledge of the
// secret can mask it, and has bytes whose base64 differs between the
// standard and URL alphabets and that URL encoding escapes.
const opaqueSecret = "opaque/Secret+Value=42 ~?>?>"

// messageWith puts s in every provider-supplied string of an assistant
// message.
func messageWith(s string) agent.Message {
	args, _ := json.Marshal(map[string]any{"cmd": "curl -H 'x: " + s + "'", "n": 1, "nested": []string{s}})
	return agent.Message{
		Role: agent.RoleAssistant, Provider: "anthropic", Model: "claude-x",
		Content: []agent.ContentBlock{
			{Type: "text", Text: "text " + s},
			{Type: "thinking", Text: "thinking " + s},
			{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "toolu_01", Name: "bash", Arguments: args}},
		},
		StopReason: agent.StopReasonError, ErrorMessage: "401 " + s, ErrorType: "type " + s, ErrorStatus: 401,
	}
}

// fields lists the provider-supplied strings of m by name.
func fields(m agent.Message) map[string]string {
	f := map[string]string{"ErrorMessage": m.ErrorMessage, "ErrorType": m.ErrorType}
	for i, b := range m.Content {
		if b.Text != "" {
			f["Content["+string(rune('0'+i))+"].Text"] = b.Text
		}
		if b.ToolCall != nil {
			f["Content["+string(rune('0'+i))+"].ToolCall.Arguments"] = string(b.ToolCall.Arguments)
		}
	}
	return f
}

func TestRedactMessage_EveryProviderStringIsRedacted(t *testing.T) {
	const shaped = "sk-ant-api03-AbC0123456789xyzXYZ-_q"
	for name, tc := range map[string]struct{ in, secret, gone string }{
		"the secret":              {opaqueSecret, opaqueSecret, opaqueSecret},
		"a key-shaped token":      {shaped, "", "AbC0123456789xyz"},
		"the secret, key-shaped":  {shaped, shaped, "AbC0123456789xyz"},
		"a bearer token":          {"Bearer ya29.a0AfH6SMBx3-0123456789", "", "a0AfH6SMBx3"},
		"an escaped JSON secret":  {opaqueSecret + `"\`, opaqueSecret, opaqueSecret},
		"the secret, JSON-quoted": {`"` + opaqueSecret + `"`, opaqueSecret, opaqueSecret},
	} {
		t.Run(name, func(t *testing.T) {
			m := messageWith(tc.in)
			orig := m.Content[2].ToolCall
			origArgs := string(orig.Arguments)
			RedactMessage(&m, tc.secret)
			for field, v := range fields(m) {
				if strings.Contains(v, tc.gone) {
					t.Errorf("%s still holds %q: %q", field, tc.gone, v)
				}
				if !strings.Contains(v, "[redacted]") {
					t.Errorf("%s = %q, want a [redacted] marker", field, v)
				}
			}
			args := m.Content[2].ToolCall.Arguments
			var parsed struct {
				Cmd    string   `json:"cmd"`
				N      int      `json:"n"`
				Nested []string `json:"nested"`
			}
			if err := json.Unmarshal(args, &parsed); err != nil || parsed.N != 1 || len(parsed.Nested) != 1 ||
				!strings.HasPrefix(parsed.Cmd, "curl -H 'x: ") {
				t.Errorf("arguments %s are no longer the same JSON (%v)", args, err)
			}
			if m.Provider != "anthropic" || m.Model != "claude-x" || m.Content[2].ToolCall.ID != "toolu_01" ||
				m.Content[2].ToolCall.Name != "bash" || m.ErrorStatus != 401 || m.StopReason != agent.StopReasonError {
				t.Errorf("fields that are not provider text changed: %+v", m)
			}
			if string(orig.Arguments) != origArgs {
				t.Errorf("the caller's tool call was modified in place")
			}
			before := fields(m)
			RedactMessage(&m, tc.secret)
			if after := fields(m); !reflect.DeepEqual(after, before) {
				t.Errorf("RedactMessage is not idempotent:\n%q\n%q", before, after)
			}
		})
	}
}

func TestRedactMessage_ToolArgumentsStayValidJSONByteForByte(t *testing.T) {
	secret := "opaque-credential-value"
	for name, tc := range map[string]struct{ in, want string }{
		"formatting kept": {
			"{ \"a\" : \"x " + secret + "\",\n  \"b\": [1, 2.50, true, null] }",
			"{ \"a\" : \"x [redacted]\",\n  \"b\": [1, 2.50, true, null] }",
		},
		"secret written with JSON escapes": {
			`{"k":"\u006fpaque-credential-value and \"quoted\" \\ text"}`,
			`{"k":"[redacted] and \"quoted\" \\ text"}`,
		},
		"secret in a key":               {`{"` + secret + `":1}`, `{"[redacted]":1}`},
		"html kept":                     {`{"k":"<b>&` + secret + `</b>"}`, `{"k":"<b>&[redacted]</b>"}`},
		"no secret":                     {`{"cmd":"ls -la", "n": 10}`, `{"cmd":"ls -la", "n": 10}`},
		"after a number no float holds": {`{"n":1e400,"k":"` + secret + `"}`, `{"n":1e400,"k":"[redacted]"}`},
		"not JSON":                      {`{"cmd":"` + secret, `{"cmd":"[redacted]`},
	} {
		t.Run(name, func(t *testing.T) {
			m := agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{
				{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "c1", Name: "bash", Arguments: json.RawMessage(tc.in)}},
			}}
			RedactMessage(&m, secret)
			got := string(m.Content[0].ToolCall.Arguments)
			if got != tc.want {
				t.Fatalf("arguments = %s, want %s", got, tc.want)
			}
			if json.Valid([]byte(tc.in)) && !json.Valid([]byte(got)) {
				t.Fatalf("arguments %s are no longer valid JSON", got)
			}
		})
	}
}

func TestRedactMessage_EncodedSecretIsRedacted(t *testing.T) {
	secret := opaqueSecret
	encodings := map[string]*base64.Encoding{
		"std": base64.StdEncoding, "std raw": base64.RawStdEncoding,
		"url": base64.URLEncoding, "url raw": base64.RawURLEncoding,
	}
	forms := map[string]string{
		"QueryEscape":               url.QueryEscape(secret),
		"PathEscape":                url.PathEscape(secret),
		"QueryEscape lowercase hex": regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(url.QueryEscape(secret), strings.ToLower),
	}
	for name, enc := range encodings {
		forms["base64 "+name+"(key)"] = enc.EncodeToString([]byte(secret))
		forms["Basic base64 "+name+"(user:key)"] = "Basic " + enc.EncodeToString([]byte("user:"+secret))
		for _, prefix := range []string{"a", "ab", "abc"} { // every alignment
			forms["base64 "+name+"("+prefix+"+key+suffix)"] = enc.EncodeToString([]byte(prefix + secret + "z"))
		}
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			if form == secret || strings.Contains(form, secret) {
				t.Fatalf("test form %q is the secret itself", form)
			}
			text := "header dump: " + form + " (rejected)"
			m := agent.Message{Role: agent.RoleAssistant, ErrorMessage: text, ErrorType: form,
				Content: []agent.ContentBlock{{Type: "text", Text: text}}}
			RedactMessage(&m, secret)
			for field, v := range fields(m) {
				core := strings.TrimPrefix(form, "Basic ")
				if strings.Contains(v, core) || strings.Contains(v, core[2:len(core)-2]) || !strings.Contains(v, "[redacted]") {
					t.Errorf("%s = %q, want %q masked", field, v, form)
				}
			}
			if !strings.HasPrefix(m.ErrorMessage, "header dump: ") || !strings.HasSuffix(m.ErrorMessage, " (rejected)") {
				t.Errorf("ErrorMessage = %q, want only the encoded secret masked", m.ErrorMessage)
			}
		})
	}
}

func TestRedactMessage_BasicCredentialOfAnyKeyIsRedacted(t *testing.T) {
	token := base64.StdEncoding.EncodeToString([]byte("alice:s3cr3t-pass"))
	m := agent.Message{Role: agent.RoleAssistant, ErrorMessage: "401: Authorization: Basic " + token + " refused"}
	RedactMessage(&m, "")
	if m.ErrorMessage != "401: Authorization: Basic [redacted] refused" {
		t.Fatalf("ErrorMessage = %q", m.ErrorMessage)
	}
	for _, text := range []string{
		"Basic authentication failed",
		"basic plan: upgrade to use this model",
		"the answer is basic arithmetic",
		"SGVsbG8gd29ybGQ= is base64 of nothing secret",
	} {
		m := agent.Message{Role: agent.RoleAssistant, ErrorMessage: text, Content: []agent.ContentBlock{{Type: "text", Text: text}}}
		RedactMessage(&m, opaqueSecret)
		if m.ErrorMessage != text || m.Content[0].Text != text {
			t.Errorf("RedactMessage changed %q to %q / %q", text, m.ErrorMessage, m.Content[0].Text)
		}
	}
}

func TestRedactMessage_NilAndEmptyAreHarmless(t *testing.T) {
	RedactMessage(nil, opaqueSecret)
	var m agent.Message
	RedactMessage(&m, opaqueSecret)
	if !reflect.DeepEqual(m, agent.Message{}) {
		t.Fatalf("empty message changed to %+v", m)
	}
	m = agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "c", Name: "n"}}}}
	RedactMessage(&m, opaqueSecret)
	if m.Content[0].ToolCall.Arguments != nil {
		t.Fatalf("nil arguments became %q", m.Content[0].ToolCall.Arguments)
	}
}

// TestStoreError_PermanentSessionErrorIsNonRetryable belongs to
// errors.go; it lives here because this is the test file of the session
// store's errors' one consumer that may be edited alongside it.
func TestStoreError_PermanentSessionErrorIsNonRetryable(t *testing.T) {
	st, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.Path("s"), []byte(`{"type":"session","version":99,"id":"s"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, loadErr := st.Load("s")
	var appErr *temporal.ApplicationError
	if err := storeError("load session", loadErr); !errors.As(err, &appErr) || !appErr.NonRetryable() ||
		appErr.Type() != ErrTypeSessionStore || !strings.Contains(err.Error(), "format version 99") {
		t.Fatalf("storeError(%v) = %v, want a non-retryable %s error", loadErr, err, ErrTypeSessionStore)
	}
	if err := storeError("load session", errors.New("flaky")); !errors.As(err, &appErr) || appErr.NonRetryable() {
		t.Fatalf("storeError(flaky) = %v, want it retryable", err)
	}
}
