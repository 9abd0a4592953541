package llm

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// SPEC 4: the retry hint comes from retry-after-ms, retry-after (seconds
// or HTTP date), x-ratelimit-reset* and anthropic-ratelimit-*-reset, in
// that order of trust; garbage is ignored.
func TestRetryHintMs_Headers(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		headers map[string]string
		want    int64
		ok      bool
	}{
		{"none", nil, 0, false},
		{"retry-after-ms", map[string]string{"retry-after-ms": "1500", "retry-after": "9"}, 1500, true},
		{"retry-after seconds", map[string]string{"retry-after": "30"}, 30000, true},
		{"retry-after fractional", map[string]string{"retry-after": "0.25"}, 250, true},
		{"retry-after date", map[string]string{"retry-after": "Fri, 01 May 2026 12:01:00 GMT"}, 60000, true},
		{"retry-after date in the past", map[string]string{"retry-after": "Fri, 01 May 2026 11:00:00 GMT"}, 0, false},
		{"x-ratelimit-reset-ms", map[string]string{"x-ratelimit-reset-ms": "700"}, 700, true},
		{"x-ratelimit-reset seconds", map[string]string{"x-ratelimit-reset": "12"}, 12000, true},
		{"x-ratelimit-reset epoch", map[string]string{"x-ratelimit-reset": "1777636830"}, 30000, true},
		{"openai resets take the longest", map[string]string{"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"}, 360000, true},
		{"anthropic reset time", map[string]string{"anthropic-ratelimit-tokens-reset": "2026-05-01T12:00:45Z"}, 45000, true},
		{"garbage", map[string]string{"retry-after": "soon", "retry-after-ms": "-5"}, 0, false},
		{"absurd", map[string]string{"retry-after": "99999999999"}, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			got, ok := RetryHintMs(h, now)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("RetryHintMs(%v) = %d, %v; want %d, %v", tc.headers, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// The provider error type is read from each vendor's body shape.
func TestErrorTypeOf_BodyShapes(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"anthropic", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error"},
		{"openai code wins", `{"error":{"message":"x","type":"invalid_request_error","code":"context_length_exceeded"}}`, "context_length_exceeded"},
		{"openai numeric code", `{"error":{"message":"x","type":"rate_limit_error","code":"429"}}`, "rate_limit_error"},
		{"google status", `{"error":{"code":429,"message":"x","status":"RESOURCE_EXHAUSTED"}}`, "RESOURCE_EXHAUSTED"},
		{"error is a string", `{"error":"model not found"}`, ""},
		{"bare type", `{"type":"exceed_context_size_error"}`, "exceed_context_size_error"},
		{"not json", `<html>502</html>`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ErrorTypeOf([]byte(tc.body)); got != tc.want {
				t.Fatalf("ErrorTypeOf(%s) = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}

// SPEC 7: a failure becomes error data: the SDK text with the secret
// masked and the hint appended, status, type and x-should-retry.
func TestFailureMessage(t *testing.T) {
	req := Request{Provider: "openai", Model: "m", Secret: "sk-test-0123456789"}
	h := http.Header{}
	h.Set("retry-after", "2")
	h.Set("x-should-retry", "true")
	m := FailureMessage(req, Failure{Text: "429 Too Many Requests key sk-test-0123456789", Status: 429, Type: "rate_limit_exceeded", Header: h}, time.Now())
	if m.StopReason != agent.StopReasonError || m.Role != agent.RoleAssistant {
		t.Fatalf("message = %+v, want an assistant error", m)
	}
	if m.ErrorMessage != "429 Too Many Requests key [redacted] retry-after-ms=2000" {
		t.Fatalf("ErrorMessage = %q", m.ErrorMessage)
	}
	if m.ErrorStatus != 429 || m.ErrorType != "rate_limit_exceeded" || m.ShouldRetry == nil || !*m.ShouldRetry {
		t.Fatalf("structured fields = %d %q %v", m.ErrorStatus, m.ErrorType, m.ShouldRetry)
	}
	bare := FailureMessage(req, Failure{Text: "read: connection reset by peer"}, time.Now())
	if bare.ErrorMessage != "read: connection reset by peer" || bare.ErrorStatus != 0 || bare.ShouldRetry != nil {
		t.Fatalf("transport failure = %+v", bare)
	}
	if empty := FailureMessage(req, Failure{}, time.Now()); !strings.Contains(empty.ErrorMessage, "no error text") {
		t.Fatalf("empty failure text = %q", empty.ErrorMessage)
	}
	if ErrorStatusOf(200) != 0 || ErrorStatusOf(529) != 529 {
		t.Fatal("ErrorStatusOf does not drop success statuses")
	}
}

// Tool-call arguments: a JSON object is kept as sent, nothing is {},
// anything else is the raw text as a JSON string; sent back, only objects
// go as they are.
func TestToolArguments(t *testing.T) {
	cases := []struct{ raw, stored, wire string }{
		{`{"path":"a.go"}`, `{"path":"a.go"}`, `{"path":"a.go"}`},
		{` {"a": [1, 2]} `, ` {"a": [1, 2]} `, ` {"a": [1, 2]} `},
		{"", `{}`, `{}`},
		{"  \n", `{}`, `{}`},
		{`{"path": "a.go", "limit": `, `"{\"path\": \"a.go\", \"limit\": "`, `{}`},
		{`[1, 2]`, `"[1, 2]"`, `{}`},
		{`null`, `"null"`, `{}`},
		{`{"a":1}{"b":2}`, `"{\"a\":1}{\"b\":2}"`, `{}`},
	}
	for _, c := range cases {
		got := ToolArguments(c.raw)
		if string(got) != c.stored || !json.Valid(got) {
			t.Errorf("ToolArguments(%q) = %s, want %s", c.raw, got, c.stored)
		}
		if !IsArgumentsObject(got) {
			var s string
			if err := json.Unmarshal(got, &s); err != nil || (s != c.raw && c.stored != `{}`) {
				t.Errorf("ToolArguments(%q) = %s does not hold the raw text", c.raw, got)
			}
		}
		if w := WireArguments(got); string(w) != c.wire {
			t.Errorf("WireArguments(%s) = %s, want %s", got, w, c.wire)
		}
	}
	if w := WireArguments(nil); string(w) != "{}" {
		t.Errorf("WireArguments(nil) = %s, want {}", w)
	}
}
