package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

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
// masked, status, type, x-should-retry and the headers' retry hint as
// fields (the hint is not written into the text).
func TestFailureMessage(t *testing.T) {
	req := Request{Provider: "openai", Model: "m", Secret: "sk-test-0123456789"}
	h := http.Header{}
	h.Set("retry-after", "2")
	h.Set("x-should-retry", "true")
	m := FailureMessage(context.Background(), req, Failure{Text: "429 Too Many Requests key sk-test-0123456789", Status: 429, Type: "rate_limit_exceeded", Header: h}, time.Now())
	if m.StopReason != agent.StopReasonError || m.Role != agent.RoleAssistant {
		t.Fatalf("message = %+v, want an assistant error", m)
	}
	if m.ErrorMessage != "429 Too Many Requests key [redacted]" {
		t.Fatalf("ErrorMessage = %q", m.ErrorMessage)
	}
	if m.ErrorStatus != 429 || m.ErrorType != "rate_limit_exceeded" || m.ShouldRetry == nil || !*m.ShouldRetry {
		t.Fatalf("structured fields = %d %q %v", m.ErrorStatus, m.ErrorType, m.ShouldRetry)
	}
	if m.RetryAfterMs == nil || *m.RetryAfterMs != 2000 {
		t.Fatalf("RetryAfterMs = %v, want 2000 (retry-after: 2)", m.RetryAfterMs)
	}
	bare := FailureMessage(context.Background(), req, Failure{Text: "read: connection reset by peer"}, time.Now())
	if bare.ErrorMessage != "read: connection reset by peer" || bare.ErrorStatus != 0 || bare.ShouldRetry != nil || bare.RetryAfterMs != nil {
		t.Fatalf("transport failure = %+v", bare)
	}
	if empty := FailureMessage(context.Background(), req, Failure{}, time.Now()); !strings.Contains(empty.ErrorMessage, "no error text") {
		t.Fatalf("empty failure text = %q", empty.ErrorMessage)
	}
	if ok := FailureMessage(context.Background(), req, Failure{Text: "stream error", Status: 200}, time.Now()); ok.ErrorStatus != 0 {
		t.Fatalf("ErrorStatus after 200 OK = %d, want 0 (a success status is not reported)", ok.ErrorStatus)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if m := FailureMessage(ctx, req, Failure{Text: "context canceled"}, time.Now()); m.StopReason != agent.StopReasonAborted {
		t.Fatalf("failure of a cancelled call = %+v, want aborted", m)
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
