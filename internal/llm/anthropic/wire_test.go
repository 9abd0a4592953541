package anthropic

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/retry"
)

// stop_reason "refusal" is not an empty success: an error no retry
// changes (x-should-retry false), of type "refusal", whose text carries
// the API's explanation.
func TestComplete_RefusalIsAVisibleError(t *testing.T) {
	refusal := sse("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": "refusal", "stop_sequence": nil,
			"stop_details": map[string]any{"type": "refusal", "category": "cyber", "explanation": "Blocked under the usage policy."}},
		"usage": map[string]any{"output_tokens": 5}}) + sse("message_stop", map[string]any{"type": "message_stop"})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, evStart, refusal) })
	m := call(t, s, request())
	if m.StopReason != agent.StopReasonError || m.ErrorType != ErrorTypeRefusal {
		t.Fatalf("message = %+v, want an error of type refusal", m)
	}
	if !strings.Contains(m.ErrorMessage, "refused") || !strings.Contains(m.ErrorMessage, "Blocked under the usage policy.") ||
		!strings.Contains(m.ErrorMessage, "cyber") {
		t.Fatalf("error text %q lacks the explanation", m.ErrorMessage)
	}
	if m.ShouldRetry == nil || *m.ShouldRetry {
		t.Fatalf("shouldRetry = %v, want false", m.ShouldRetry)
	}
	if c := classify(m); c.Class != retry.ClassFatal {
		t.Fatalf("a refusal is classified %+v, want not retried", c)
	}
}

// stop_reason "pause_turn" is StopReasonContinue, its content kept (the
// caller sends it back to go on).
func TestComplete_PauseTurnContinues(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w, evStart, evTextStart(0), evText(0, "Searching"), evStop(0), evFinish("pause_turn"))
	})
	m := call(t, s, request())
	if m.StopReason != agent.StopReasonContinue || m.Text() != "Searching" {
		t.Fatalf("message = %+v, want continue with the text", m)
	}
}

// Thinking of another provider (an OpenAI-compatible server's reasoning,
// whose signature is a field name) is not sent to Anthropic as a signed
// thinking block; Anthropic's own is.
func TestMessages_ForeignThinkingNotSent(t *testing.T) {
	foreign := agent.Message{Role: agent.RoleAssistant, API: agent.APIOf("openai"), Content: []agent.ContentBlock{
		{Type: "thinking", Text: "hmm", Signature: "reasoning_content"}, {Type: "text", Text: "a"}}}
	own := agent.Message{Role: agent.RoleAssistant, API: agent.APIOf("anthropic"), Content: []agent.ContentBlock{
		{Type: "thinking", Text: "hmm", Signature: "SIG"}, {Type: "text", Text: "b"}}}
	got, err := json.Marshal(messages([]agent.Message{foreign, own}))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"assistant","content":[{"type":"text","text":"a"}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"SIG"},{"type":"text","text":"b"}]}]`
	if !jsonEqual(t, got, want) {
		t.Fatalf("sent %s\nwant %s", got, want)
	}
}
