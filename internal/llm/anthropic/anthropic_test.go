package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/retry"
)

const testKey = "sk-ant-api03-test-0123456789abcdef"

// Wire fragments of the Messages API stream.
const (
	evStart = `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1,"cache_read_input_tokens":3,"cache_creation_input_tokens":2}}}

`
	evBlockStart = `event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

`
	evHello = `event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}

`
	evWorld = `event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" world"}}

`
	evEnd = `event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}

event: message_stop
data: {"type":"message_stop"}

`
	evOverloaded = `event: error
data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}

`
)

// server is a local Messages API: handle serves /v1/messages; every
// request's auth headers and body are recorded.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	auth   []string
	bodies []string
}

func newServer(t *testing.T, handle http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.auth = append(s.auth, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key"))
		s.bodies = append(s.bodies, string(body))
		s.mu.Unlock()
		if r.URL.Path != "/v1/messages" {
			http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
			return
		}
		handle(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func stream(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, e := range events {
		fmt.Fprint(w, e)
		w.(http.Flusher).Flush()
	}
}

func jsonError(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

// reset closes the client's connection with a TCP RST, after flushing
// whatever was written.
func reset(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

func request() llm.Request {
	return llm.Request{
		SessionID: "s1", Provider: "anthropic", Model: "claude-test", System: "be brief",
		Messages: []agent.Message{agent.TextMessage(agent.RoleUser, "hi")},
		Secret:   testKey,
	}
}

func call(t *testing.T, s *server, req llm.Request) agent.Message {
	t.Helper()
	p := New(s.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.Complete(ctx, req)
}

func classify(m agent.Message) retry.Classification {
	return retry.Classify(retry.Outcome{StopReason: string(m.StopReason), ErrorMessage: m.ErrorMessage,
		ErrorStatus: m.ErrorStatus, ErrorType: m.ErrorType, ShouldRetry: m.ShouldRetry, RetryAfterMs: m.RetryAfterMs})
}

// Streaming answer: text, stop reason and usage come through, the key is sent.
func TestComplete_StreamsAnswer(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w, evStart, evBlockStart, evHello, evWorld, evEnd)
	})
	m := call(t, s, request())
	if m.StopReason != agent.StopReasonStop || m.Text() != "Hello world" {
		t.Fatalf("message = %+v, want stop with %q", m, "Hello world")
	}
	if m.Usage == nil || m.Usage.Input != 12 || m.Usage.Output != 5 || m.Usage.CacheRead != 3 || m.Usage.CacheWrite != 2 {
		t.Fatalf("usage = %+v, want input 12 output 5 cacheRead 3 cacheWrite 2", m.Usage)
	}
	if len(s.auth) != 1 || !strings.Contains(s.auth[0], testKey) {
		t.Fatalf("auth headers = %q, want the key once", s.auth)
	}
}

// SPEC 2/4/7: each provider failure becomes error data with the SDK's text,
// status, type, x-should-retry and the retry hint, and lands in the right class.
func TestComplete_FailuresAreData(t *testing.T) {
	cases := []struct {
		name       string
		handle     http.HandlerFunc
		wantStatus int
		wantType   string
		wantText   []string
		wantClass  retry.Class
		wantHint   int64
		wantRetry  *bool
	}{
		{
			name: "529 overloaded (Go prints no status text)",
			handle: jsonError(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
				"x-should-retry", "true", "request-id", "req_529"),
			wantStatus: 529, wantType: "overloaded_error",
			wantText:  []string{`529  (Request-ID: req_529) {"type":"error","error":{"type":"overloaded_error"`},
			wantClass: retry.ClassRetryable, wantRetry: boolPtr(true),
		},
		{
			name:       "429 with retry-after",
			handle:     jsonError(429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`, "retry-after", "30"),
			wantStatus: 429, wantType: "rate_limit_error",
			wantText:  []string{"429 Too Many Requests"},
			wantClass: retry.ClassRetryable, wantHint: 30000,
		},
		{
			name:       "500 api_error",
			handle:     jsonError(500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`),
			wantStatus: 500, wantType: "api_error", wantText: []string{"500 Internal Server Error"},
			wantClass: retry.ClassRetryable,
		},
		{
			name: "502 html from a proxy",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusBadGateway)
				fmt.Fprint(w, "<html><body><h1>502 Bad Gateway</h1></body></html>")
			},
			wantStatus: 502, wantText: []string{"502 Bad Gateway"}, wantClass: retry.ClassRetryable,
		},
		{
			name:       "503 with retry-after-ms",
			handle:     jsonError(503, `{"type":"error","error":{"type":"api_error","message":"Service Unavailable"}}`, "retry-after-ms", "1500"),
			wantStatus: 503, wantType: "api_error", wantText: []string{"503 Service Unavailable"},
			wantClass: retry.ClassRetryable, wantHint: 1500,
		},
		{
			name: "overloaded_error mid-stream after 200",
			handle: func(w http.ResponseWriter, r *http.Request) {
				stream(w, evStart, evBlockStart, evHello, evOverloaded)
			},
			wantStatus: 0, wantType: "overloaded_error", wantText: []string{`"overloaded_error"`},
			wantClass: retry.ClassRetryable,
		},
		{
			name:      "connection reset before the answer",
			handle:    func(w http.ResponseWriter, r *http.Request) { reset(w) },
			wantClass: retry.ClassRetryable,
		},
		{
			name: "connection reset mid-stream",
			handle: func(w http.ResponseWriter, r *http.Request) {
				stream(w, evStart, evBlockStart, evHello)
				reset(w)
			},
			wantClass: retry.ClassRetryable,
		},
		{
			name:       "context length",
			handle:     jsonError(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}`),
			wantStatus: 400, wantType: "invalid_request_error", wantText: []string{"prompt is too long: 213462 tokens > 200000 maximum"},
			wantClass: retry.ClassContextOverflow,
		},
		{
			name:       "401 bad key",
			handle:     jsonError(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, "x-should-retry", "false"),
			wantStatus: 401, wantType: "authentication_error", wantText: []string{"401 Unauthorized", "invalid x-api-key"},
			wantClass: retry.ClassFatal, wantRetry: boolPtr(false),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := call(t, newServer(t, tc.handle), request())
			if m.StopReason != agent.StopReasonError || m.ErrorMessage == "" {
				t.Fatalf("message = %+v, want an error message", m)
			}
			t.Logf("errorMessage: %s", m.ErrorMessage)
			if m.ErrorStatus != tc.wantStatus || m.ErrorType != tc.wantType {
				t.Fatalf("status/type = %d/%q, want %d/%q (text %q)", m.ErrorStatus, m.ErrorType, tc.wantStatus, tc.wantType, m.ErrorMessage)
			}
			for _, w := range tc.wantText {
				if !strings.Contains(m.ErrorMessage, w) {
					t.Fatalf("error text %q does not contain %q", m.ErrorMessage, w)
				}
			}
			if (m.ShouldRetry == nil) != (tc.wantRetry == nil) || m.ShouldRetry != nil && *m.ShouldRetry != *tc.wantRetry {
				t.Fatalf("ShouldRetry = %v, want %v", m.ShouldRetry, tc.wantRetry)
			}
			c := classify(m)
			if c.Class != tc.wantClass {
				t.Fatalf("classified %q (pattern %q), want %q; text %q", c.Class, c.Pattern, tc.wantClass, m.ErrorMessage)
			}
			if tc.wantHint != 0 && (!c.HasHint || c.RetryAfterMs != tc.wantHint) {
				t.Fatalf("hint = %d/%v, want %d", c.RetryAfterMs, c.HasHint, tc.wantHint)
			}
			// The headers' hint travels as data, not as text (SPEC 4).
			if (m.RetryAfterMs != nil) != (tc.wantHint != 0) || m.RetryAfterMs != nil && *m.RetryAfterMs != tc.wantHint {
				t.Fatalf("RetryAfterMs = %v, want %d", m.RetryAfterMs, tc.wantHint)
			}
			if strings.Contains(m.ErrorMessage, "retry-after-ms") {
				t.Fatalf("error text %q carries the hint as text", m.ErrorMessage)
			}
			if strings.Contains(m.ErrorMessage, testKey) {
				t.Fatalf("error text leaks the key: %q", m.ErrorMessage)
			}
		})
	}
}

// A slow first token (longer than a heartbeat interval) is no failure:
// the provider waits; liveness is the activity's ticker's business.
func TestComplete_SlowFirstTokenIsNotKilled(t *testing.T) {
	const delay = 600 * time.Millisecond
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		stream(w, evStart, evBlockStart, evHello, evEnd)
	})
	start := time.Now()
	m := call(t, s, request())
	if m.StopReason != agent.StopReasonStop || m.Text() != "Hello" {
		t.Fatalf("message = %+v, want the answer", m)
	}
	if time.Since(start) < delay {
		t.Fatalf("answer came before the server sent it")
	}
}

// SPEC 5: cancelling the call cancels the HTTP request and yields an aborted message.
func TestComplete_CancelAbortsTheRequest(t *testing.T) {
	gone := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w, evStart, evBlockStart, evHello)
		<-r.Context().Done()
		close(gone)
	})
	p := New(s.URL)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	m := p.Complete(ctx, request())
	if m.StopReason != agent.StopReasonAborted {
		t.Fatalf("message = %+v, want aborted", m)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the request cancelled")
	}
}

// Without a credential nothing is sent and the error is fatal.
func TestComplete_NoCredential(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, evStart, evEnd) })
	req := request()
	req.Secret = ""
	m := call(t, s, req)
	if m.StopReason != agent.StopReasonError || !strings.Contains(m.ErrorMessage, EnvAPIKey) {
		t.Fatalf("message = %+v, want a no-credential error naming %s", m, EnvAPIKey)
	}
	if len(s.auth) != 0 {
		t.Fatalf("%d requests sent without a credential", len(s.auth))
	}
	if c := classify(m); c.Class != retry.ClassFatal {
		t.Fatalf("classified %q, want fatal", c.Class)
	}
}

// The run context reaches the API in its wire shape: roles, tool use and
// tool results; error messages without content are not resent.
func TestMessages_Conversion(t *testing.T) {
	toolCall := agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{
		{Type: "thinking", Text: "hmm"},
		{Type: "text", Text: "reading"},
		{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "tu_1", Name: "read", Arguments: []byte(`{"path":"a.go"}`)}},
	}}
	msgs := []agent.Message{
		agent.TextMessage(agent.RoleUser, "fix it"),
		toolCall,
		{Role: agent.RoleToolResult, ToolCallID: "tu_1", Content: []agent.ContentBlock{{Type: "text", Text: "package a"}}},
		{Role: agent.RoleAssistant}, // an empty assistant message is not sent
	}
	raw, err := json.Marshal(messages(msgs))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"content":[{"text":"fix it","type":"text"}],"role":"user"},` +
		`{"content":[{"text":"reading","type":"text"},{"id":"tu_1","input":{"path":"a.go"},"name":"read","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"tool_use_id":"tu_1","is_error":false,"content":[{"text":"package a","type":"text"}],"type":"tool_result"}],"role":"user"}]`
	if !jsonEqual(t, raw, want) {
		t.Fatalf("wire messages =\n%s\nwant\n%s", raw, want)
	}
}

func jsonEqual(t *testing.T, a []byte, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

func boolPtr(b bool) *bool { return &b }
