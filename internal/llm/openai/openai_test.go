package openai

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

const testKey = "sk-proj-test-0123456789abcdefghij"

// Wire fragments of a Chat Completions stream.
const (
	chunkHel  = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}` + "\n\n"
	chunkLo   = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}` + "\n\n"
	chunkUse  = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":4}}}` + "\n\n"
	chunkDone = "data: [DONE]\n\n"
	chunkErr  = `data: {"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}` + "\n\n"
)

// server is a local Chat Completions endpoint under /v1; every request's
// Authorization header and body are recorded.
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
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.bodies = append(s.bodies, string(body))
		s.mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
			return
		}
		handle(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func stream(w http.ResponseWriter, chunks ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, c := range chunks {
		fmt.Fprint(w, c)
		w.(http.Flusher).Flush()
	}
}

func respond(status int, contentType, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

func jsonError(status int, body string, headers ...string) http.HandlerFunc {
	return respond(status, "application/json", body, headers...)
}

// reset closes the client's connection with a TCP RST after flushing.
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
		SessionID: "s1", Provider: "openai", Model: "gpt-test", System: "be brief", MaxTokens: 256,
		Messages: []agent.Message{agent.TextMessage(agent.RoleUser, "hi")},
		Secret:   testKey,
	}
}

func call(t *testing.T, s *server, req llm.Request) agent.Message {
	t.Helper()
	p := New(s.URL + "/v1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.Complete(ctx, req)
}

func classify(m agent.Message) retry.Classification {
	return retry.Classify(retry.Outcome{StopReason: string(m.StopReason), ErrorMessage: m.ErrorMessage,
		ErrorStatus: m.ErrorStatus, ErrorType: m.ErrorType, ShouldRetry: m.ShouldRetry, RetryAfterMs: m.RetryAfterMs})
}

// Streaming answer: text, stop reason and usage (cached tokens apart) come through.
func TestComplete_StreamsAnswer(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w, chunkHel, chunkLo, chunkUse, chunkDone)
	})
	m := call(t, s, request())
	if m.StopReason != agent.StopReasonStop || m.Text() != "Hello" {
		t.Fatalf("message = %+v, want stop with %q", m, "Hello")
	}
	if m.Usage == nil || m.Usage.Input != 6 || m.Usage.CacheRead != 4 || m.Usage.Output != 2 {
		t.Fatalf("usage = %+v, want input 6 cacheRead 4 output 2", m.Usage)
	}
	if s.auth[0] != "Bearer "+testKey {
		t.Fatalf("Authorization = %q, want the bearer key", s.auth[0])
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(s.bodies[0]), &body); err != nil {
		t.Fatal(err)
	}
	if body["stream"] != true || body["max_tokens"] != float64(256) || body["model"] != "gpt-test" {
		t.Fatalf("request body = %s, want stream, model and max_tokens (compatible server)", s.bodies[0])
	}
}

// SPEC 2/4/7: each provider failure becomes error data with the SDK's text,
// status, code/type, x-should-retry and the retry hint, in the right class.
func TestComplete_FailuresAreData(t *testing.T) {
	cases := []struct {
		name       string
		handle     http.HandlerFunc
		wantStatus int
		wantType   string
		wantText   []string
		wantClass  retry.Class
		wantHint   int64
	}{
		{
			name:       "429 rate limit with retry-after-ms",
			handle:     jsonError(429, `{"error":{"message":"Rate limit reached for gpt-test in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`, "retry-after-ms", "2500"),
			wantStatus: 429, wantType: "rate_limit_exceeded",
			wantText:  []string{"429 Too Many Requests", "Rate limit reached"},
			wantClass: retry.ClassRetryable, wantHint: 2500,
		},
		{
			name:       "429 quota with reset headers",
			handle:     jsonError(429, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, "x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s"),
			wantStatus: 429, wantType: "insufficient_quota",
			wantText:  []string{"exceeded your current quota"},
			wantClass: retry.ClassUsageLimit, wantHint: 360000,
		},
		{
			name:       "500 server error",
			handle:     jsonError(500, `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`),
			wantStatus: 500, wantType: "server_error", wantText: []string{"500 Internal Server Error"},
			wantClass: retry.ClassRetryable,
		},
		{
			name:       "502 html from a proxy",
			handle:     respond(502, "text/html", "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"),
			wantStatus: 502, wantText: []string{"502"}, wantClass: retry.ClassRetryable,
		},
		{
			name:       "503 with retry-after seconds",
			handle:     jsonError(503, `{"error":{"message":"Service Unavailable","type":"server_error"}}`, "retry-after", "7"),
			wantStatus: 503, wantType: "server_error", wantText: []string{"503 Service Unavailable"},
			wantClass: retry.ClassRetryable, wantHint: 7000,
		},
		{
			name:       "error object mid-stream after 200",
			handle:     func(w http.ResponseWriter, r *http.Request) { stream(w, chunkHel, chunkErr) },
			wantStatus: 0, wantType: "server_error", wantText: []string{"The server had an error"},
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
				stream(w, chunkHel)
				reset(w)
			},
			wantClass: retry.ClassRetryable,
		},
		{
			name:       "context length",
			handle:     jsonError(400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 140004 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`),
			wantStatus: 400, wantType: "context_length_exceeded", wantText: []string{"maximum context length is 128000 tokens"},
			wantClass: retry.ClassContextOverflow,
		},
		{
			name:       "llama.cpp context size as a 500",
			handle:     jsonError(500, `{"error":{"code":500,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}`),
			wantStatus: 500, wantType: "exceed_context_size_error", wantText: []string{"exceeds the available context size"},
			wantClass: retry.ClassContextOverflow,
		},
		{
			name:       "401 echoing the key is redacted",
			handle:     jsonError(401, `{"error":{"message":"Incorrect API key provided: `+testKey+`. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			wantStatus: 401, wantType: "invalid_api_key", wantText: []string{"401 Unauthorized", "Incorrect API key provided: [redacted]"},
			wantClass: retry.ClassFatal,
		},
		{
			name:       "ollama model not found (error is a string)",
			handle:     jsonError(404, `{"error":"model \"llama9\" not found, try pulling it first"}`),
			wantStatus: 404, wantText: []string{"404"}, wantClass: retry.ClassFatal,
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

// A slow first token (longer than a heartbeat interval) is no failure.
func TestComplete_SlowFirstTokenIsNotKilled(t *testing.T) {
	const delay = 600 * time.Millisecond
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		stream(w, chunkHel, chunkLo, chunkDone)
	})
	start := time.Now()
	m := call(t, s, request())
	if m.StopReason != agent.StopReasonStop || m.Text() != "Hello" {
		t.Fatalf("message = %+v, want the answer", m)
	}
	if time.Since(start) < delay {
		t.Fatal("answer came before the server sent it")
	}
}

// SPEC 5: cancelling the call cancels the HTTP request and yields an aborted message.
func TestComplete_CancelAbortsTheRequest(t *testing.T) {
	gone := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w, chunkHel)
		<-r.Context().Done()
		close(gone)
	})
	p := New(s.URL + "/v1")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if m := p.Complete(ctx, request()); m.StopReason != agent.StopReasonAborted {
		t.Fatalf("message = %+v, want aborted", m)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the request cancelled")
	}
}

// A local server at a base URL needs no key: none is sent. OpenAI itself
// without a key is a fatal error that sends nothing.
func TestComplete_KeylessLocalServer(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, chunkHel, chunkLo, chunkDone) })
	req := request()
	req.Secret = ""
	if m := call(t, s, req); m.StopReason != agent.StopReasonStop {
		t.Fatalf("message = %+v, want an answer", m)
	}
	if s.auth[0] != "" {
		t.Fatalf("Authorization = %q, want none", s.auth[0])
	}
	m := New("").Complete(context.Background(), req)
	if m.StopReason != agent.StopReasonError || !strings.Contains(m.ErrorMessage, EnvAPIKey) {
		t.Fatalf("OpenAI without a key = %+v, want an error naming %s", m, EnvAPIKey)
	}
	if c := classify(m); c.Class != retry.ClassFatal {
		t.Fatalf("classified %q, want fatal", c.Class)
	}
}

// The run context reaches the API in its wire shape: system first, tool
// calls on the assistant message, tool results as tool messages.
func TestMessages_Conversion(t *testing.T) {
	msgs := []agent.Message{
		agent.TextMessage(agent.RoleUser, "fix it"),
		{Role: agent.RoleAssistant, Content: []agent.ContentBlock{
			{Type: "text", Text: "reading"},
			{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "call_1", Name: "read", Arguments: []byte(`{"path":"a.go"}`)}},
		}},
		{Role: agent.RoleToolResult, ToolCallID: "call_1", Content: []agent.ContentBlock{{Type: "text", Text: "package a"}}},
		{Role: agent.RoleAssistant},
	}
	raw, err := json.Marshal(messages("sys", msgs))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"content":"sys","role":"system"},{"content":"fix it","role":"user"},` +
		`{"content":"reading","tool_calls":[{"id":"call_1","function":{"arguments":"{\"path\":\"a.go\"}","name":"read"},"type":"function"}],"role":"assistant"},` +
		`{"content":"package a","tool_call_id":"call_1","role":"tool"}]`
	var got, exp any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Fatalf("wire messages =\n%s\nwant\n%s", raw, want)
	}
}
