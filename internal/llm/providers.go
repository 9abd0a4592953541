package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/retry"
)

// Failure is a failed provider call as the SDK reported it, plus what the
// HTTP response told (real providers fill it; see FailureMessage).
type Failure struct {
	// Text is the SDK's error text, unchanged (err.Error()).
	Text string
	// Status is the HTTP status of the response; FailureMessage reports
	// error statuses only, so a stream that failed after 200 OK has none
	// and the classifier reads the error type and text instead.
	Status int
	// Type is the provider's error type or code from the body
	// ("overloaded_error", "insufficient_quota", "context_length_exceeded").
	Type string
	// Header is the error response's header (nil without a response).
	Header http.Header
}

// FailureMessage turns a failure into the assistant error message (errors
// are data, package doc), or the aborted message when ctx was cancelled
// (the failure is then the cancellation's). The text is the SDK's, with the secret masked.
// What the response said in a structured way travels as fields, not as
// text: the status, the error type, x-should-retry as ShouldRetry, and
// the headers' retry hint (retry.ParseRetryHintHeaders) as RetryAfterMs,
// which the retry policy reads before any hint in the text (SPEC 4).
func FailureMessage(ctx context.Context, req Request, f Failure, now time.Time) agent.Message {
	if ctx.Err() != nil {
		return AbortedMessage(req)
	}
	text := cmp.Or(f.Text, "provider call failed with no error text")
	if len(req.Secret) >= 8 { // a shorter one is no real key, and masking it would garble words
		text = strings.ReplaceAll(text, req.Secret, "[redacted]")
	}
	m := ErrorMessage(req, text)
	if f.Status >= 400 {
		m.ErrorStatus = f.Status
	}
	m.ErrorType = f.Type
	if ms, ok := retry.ParseRetryHintHeaders(f.Header.Get, now); ok {
		m.RetryAfterMs = &ms
	}
	switch v := strings.ToLower(strings.TrimSpace(f.Header.Get("x-should-retry"))); v {
	case "true", "false":
		m.ShouldRetry = new(v == "true")
	}
	return m
}

// ErrorTypeOf reads the provider's error type from an error body. The
// shapes differ: Anthropic {"type":"error","error":{"type":...}}, OpenAI
// {"error":{"type":...,"code":...}} (the code is more specific when it is a
// word: "context_length_exceeded", "invalid_api_key"), Google
// {"error":{"status":"RESOURCE_EXHAUSTED"}}, and bare {"type":...}. It
// returns "" when the body says nothing usable.
func ErrorTypeOf(body []byte) string {
	var b struct {
		Type  string          `json:"type"`
		Error json.RawMessage `json:"error"`
		Code  json.RawMessage `json:"code"`
	}
	if json.Unmarshal(body, &b) != nil {
		return ""
	}
	if len(b.Error) > 0 && b.Error[0] == '{' {
		var e struct {
			Type   string          `json:"type"`
			Code   json.RawMessage `json:"code"`
			Status string          `json:"status"`
		}
		if json.Unmarshal(b.Error, &e) == nil {
			if c := wordCode(e.Code); c != "" {
				return c
			}
			if e.Type != "" {
				return e.Type
			}
			return e.Status
		}
	}
	if c := wordCode(b.Code); c != "" {
		return c
	}
	if b.Type != "error" {
		return b.Type
	}
	return ""
}

// wordCode returns a JSON string code that is a word, not a number such
// as "429" (a status, already known) or an empty string.
func wordCode(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil || s == "" {
		return ""
	}
	if _, err := strconv.Atoi(s); err == nil {
		return ""
	}
	return s
}

// NoCredentialText is the error text of a provider that needs a key but
// got none; it is fatal (no retry can conjure a key).
func NoCredentialText(provider, envVar string) string {
	return fmt.Sprintf("no credential for provider %s: set %s or add one with 'starter auth add %s'", provider, envVar, provider)
}

// ToolArguments turns the argument text a model streamed for a tool call
// into the stored agent.ToolCall.Arguments (see the package doc): the text
// itself when it is a JSON object, {} when it is empty, and otherwise (a
// model bug, or a stream cut mid-call) the text as a JSON string, so the
// call survives and stays valid JSON to store.
func ToolArguments(raw string) json.RawMessage {
	trimmed := bytes.TrimSpace([]byte(raw))
	if len(trimmed) == 0 {
		return json.RawMessage("{}")
	}
	if IsArgumentsObject(trimmed) {
		return json.RawMessage(raw)
	}
	s, _ := json.Marshal(raw) // a string always marshals
	return json.RawMessage(s)
}

// IsArgumentsObject reports whether stored tool-call arguments are a JSON
// object, that is, whether the model sent valid arguments.
func IsArgumentsObject(args json.RawMessage) bool {
	trimmed := bytes.TrimSpace(args)
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed)
}

// WireArguments is what a provider sends back for stored tool-call
// arguments: the object as is, and {} for empty or non-object arguments
// (the model's invalid text would make the API, or a compatible server
// that parses it, reject every later request of the session; the error
// tool result tells the model what went wrong).
func WireArguments(args json.RawMessage) json.RawMessage {
	if IsArgumentsObject(args) {
		return args
	}
	return json.RawMessage("{}")
}

// ObjectSchema is a tool's JSON Schema as a provider sends it: decoded
// (numbers as float64: the SDKs' encoders write a json.Number as a
// string), with type "object" and properties ({} when missing), which
// Anthropic requires and some compatible servers need. A missing or
// malformed schema is an object without properties.
func ObjectSchema(raw json.RawMessage) map[string]any {
	var fields map[string]any
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		fields = map[string]any{}
	}
	fields["type"] = "object"
	if fields["properties"] == nil {
		fields["properties"] = map[string]any{}
	}
	return fields
}
