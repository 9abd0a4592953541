package activities_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/retry"
	"github.com/durableagent/durableagent/workflows"
)

// testKey is the credential the auth store hands out; the local server
// echoes it back in its error bodies, as OpenAI does for a bad key.
const testKey = "sk-proj-SECRETSECRET-0123456789abcdefXYZ"

// recorder is a payload codec that keeps a copy of every payload the
// Temporal SDK converts: workflow input and result, activity inputs and
// results, heartbeat details, signals, query results, memo.
type recorder struct {
	mu   sync.Mutex
	data [][]byte
}

func (r *recorder) add(ps []*commonpb.Payload) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range ps {
		r.data = append(r.data, append([]byte(nil), p.GetData()...))
		for k, v := range p.GetMetadata() {
			r.data = append(r.data, []byte(k), append([]byte(nil), v...))
		}
	}
}

func (r *recorder) Encode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	r.add(ps)
	return ps, nil
}
func (r *recorder) Decode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	r.add(ps)
	return ps, nil
}

func (r *recorder) all() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.data...)
}

// realStack is the Prompt workflow on the SDK test environment with the
// real activities, the real auth store, and a real provider client (the
// OpenAI-compatible one unless newProviderStack names another) talking to
// a local HTTP server.
type realStack struct {
	env      *testsuite.TestWorkflowEnvironment
	store    *session.Store
	dataDir  string
	payloads *recorder
	logs     *bytes.Buffer
	captured [][]byte // activity inputs and outputs from the listeners
	mu       sync.Mutex
}

func newRealStack(t *testing.T, handler http.HandlerFunc, heartbeatInterval time.Duration) *realStack {
	t.Helper()
	return newProviderStack(t, "openai", handler, heartbeatInterval)
}

// newProviderStack is a realStack whose model provider ("openai" or
// "anthropic") talks to handler, with the stored key for that provider.
func newProviderStack(t *testing.T, provider string, handler http.HandlerFunc, heartbeatInterval time.Duration) *realStack {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)

	s := &realStack{dataDir: t.TempDir(), payloads: &recorder{}, logs: &bytes.Buffer{}}
	store, err := session.Open(filepath.Join(s.dataDir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	s.store = store
	f, err := auth.OpenFile(filepath.Join(s.dataDir, auth.FileName), auth.FileOptions{Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Add(auth.Credential{ID: "work-key", Provider: provider, Secret: testKey}); err != nil {
		t.Fatal(err)
	}
	acts := &activities.Activities{
		Sessions:          store,
		Provider:          app.NewProviders(settingsFor(provider, srv.URL), nil),
		Credentials:       f,
		HeartbeatInterval: heartbeatInterval,
	}

	var suite testsuite.WorkflowTestSuite
	var logMu sync.Mutex
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewJSONHandler(lockedWriter{&logMu, s.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	env := suite.NewTestWorkflowEnvironment()
	env.SetDataConverter(converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), s.payloads))
	env.RegisterWorkflowWithOptions(workflows.Prompt, workflow.RegisterOptions{Name: workflows.PromptWorkflowName})
	env.RegisterActivityWithOptions(acts.CallModel, activity.RegisterOptions{Name: activities.CallModelName})
	env.RegisterActivityWithOptions(acts.AppendEntries, activity.RegisterOptions{Name: activities.AppendEntriesName})
	env.RegisterActivityWithOptions(acts.LoadSession, activity.RegisterOptions{Name: activities.LoadSessionName})
	env.RegisterActivityWithOptions(acts.BeginPrompt, activity.RegisterOptions{Name: activities.BeginPromptName})
	env.RegisterActivityWithOptions(acts.RecordEntry, activity.RegisterOptions{Name: activities.RecordEntryName})
	env.RegisterActivityWithOptions(acts.SessionSettings, activity.RegisterOptions{Name: activities.SessionSettingsName})
	env.RegisterActivityWithOptions(acts.RunTool, activity.RegisterOptions{Name: activities.RunToolName})
	env.RegisterActivityWithOptions(acts.MarkUsageLimitReached, activity.RegisterOptions{Name: activities.MarkUsageLimitReachedName})
	env.SetOnActivityStartedListener(func(_ *activity.Info, _ context.Context, args converter.EncodedValues) {
		var raw json.RawMessage
		if args.HasValues() && args.Get(&raw) == nil {
			s.capture(raw)
		}
	})
	env.SetOnActivityCompletedListener(func(_ *activity.Info, result converter.EncodedValue, err error) {
		var raw json.RawMessage
		if result != nil && result.HasValue() && result.Get(&raw) == nil {
			s.capture(raw)
		}
		if err != nil {
			s.capture([]byte(err.Error()))
		}
	})
	s.env = env
	return s
}

func (s *realStack) capture(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.captured = append(s.captured, append([]byte(nil), b...))
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// settingsFor is the worker settings of a provider's model served at
// srvURL: the OpenAI-compatible client adds /chat/completions to its base
// URL, the Anthropic SDK /v1/messages.
func settingsFor(provider, srvURL string) (s settings.Settings) {
	s.Model.Provider = provider
	s.Model.BaseURL = srvURL
	if provider == "openai" {
		s.Model.BaseURL += "/v1"
	}
	return s
}

func promptInput(heartbeatTimeoutMs int64) workflows.PromptInput {
	st := retry.DefaultSettings()
	return workflows.PromptInput{
		SessionID: "s-secret", Message: "fix the bug",
		Model:              activities.ModelRef{Provider: "openai", Name: "gpt-test", ContextWindow: 128000},
		Retry:              st,
		HeartbeatTimeoutMs: heartbeatTimeoutMs,
	}
}

func (s *realStack) run(t *testing.T, in workflows.PromptInput) (workflows.PromptResult, []agent.Event, error) {
	t.Helper()
	s.env.ExecuteWorkflow(workflows.PromptWorkflowName, in)
	if !s.env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	var res workflows.PromptResult
	err := s.env.GetWorkflowResult(&res)
	v, qerr := s.env.QueryWorkflow(agent.QueryEvents, int64(0))
	if qerr != nil {
		t.Fatalf("query events: %v", qerr)
	}
	var evs []agent.Event
	if err := v.Get(&evs); err != nil {
		t.Fatalf("decode events: %v", err)
	}
	return res, evs, err
}

// openAIError writes an OpenAI error body that echoes the caller's key.
func openAIError(w http.ResponseWriter, r *http.Request, status int, typ, code, msgPrefix string, headers ...string) {
	key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	for i := 0; i+1 < len(headers); i += 2 {
		w.Header().Set(headers[i], headers[i+1])
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msgPrefix + key + ". You can find your API key at https://platform.openai.com/account/api-keys.",
		"type":    typ, "param": nil, "code": code,
	}})
	_, _ = w.Write(body)
}

// Secrets never reach Temporal or the session file (SPEC 7): a provider
// that echoes the key in a retryable 429 and then in a fatal 401 drives
// the prompt through a retry and a failure; the key appears in no payload
// (workflow input and result, activity inputs and results, heartbeats,
// query results), no event, no activity error, no log line and not in
// the session file or anything else in the data directory but auth.json.
func TestSecrets_NeverLeaveTheWorker(t *testing.T) {
	var calls atomic.Int32
	s := newRealStack(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			t.Errorf("request without the stored key: %q", r.Header.Get("Authorization"))
		}
		if calls.Add(1) == 1 {
			openAIError(w, r, 429, "requests", "rate_limit_exceeded", "Rate limit reached for key ", "retry-after", "1")
			return
		}
		openAIError(w, r, 401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: ")
	}, 50*time.Millisecond)

	res, evs, err := s.run(t, promptInput(0))
	if err == nil {
		t.Fatalf("prompt succeeded (%+v), want it to fail on the 401", res)
	}
	if calls.Load() != 2 {
		t.Fatalf("%d model calls, want 2 (the 429 retried once, then the fatal 401)", calls.Load())
	}
	var sawRetry, sawEnd bool
	for _, e := range evs {
		sawRetry = sawRetry || e.Type == agent.EventAutoRetryStart && strings.Contains(e.ErrorMessage, "Rate limit reached")
		sawEnd = sawEnd || e.Type == agent.EventAutoRetryEnd && !e.Success
	}
	if !sawRetry || !sawEnd {
		t.Fatalf("events %+v lack the retry start and failed end the provider errors should cause", evs)
	}

	scanForKey(t, s, evs, err)
}

// A slow first token, longer than the heartbeat timeout, does not kill
// the call: the activity heartbeats on its ticker while the provider
// waits, so the answer arrives without a retry.
func TestSlowFirstTokenOutlivesHeartbeatTimeout(t *testing.T) {
	const firstToken = 1500 * time.Millisecond
	var calls atomic.Int32
	s := newRealStack(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		time.Sleep(firstToken)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"done"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}, 0)

	res, evs, err := s.run(t, promptInput(400)) // heartbeat timeout 400 ms, ticker every 100 ms
	if err != nil {
		t.Fatalf("prompt failed: %v (events %+v)", err, evs)
	}
	if res.Text != "done" || calls.Load() != 1 {
		t.Fatalf("result %+v after %d calls, want the answer from one call", res, calls.Load())
	}
	for _, e := range evs {
		if e.Type == agent.EventAutoRetryStart {
			t.Fatalf("a retry started (%+v): the slow call was taken for a dead worker", e)
		}
	}
}

// SPEC 4 [beyond], end to end: retry.respectRetryAfter and retry.maxDelayMs
// go from the settings (client.PromptInput) through the workflow to the
// wait; the hint comes from the provider's retry-after header, which the
// OpenAI-compatible client carries as data (agent.Message.RetryAfterMs,
// CallModelResult.RetryAfterMs, retry.Outcome.RetryAfterMs), not as text.
// Both are off by default, so the default wait ignores the hint.
func TestRetryHint_OptInSettingsEndToEnd(t *testing.T) {
	cases := []struct {
		name      string
		respect   bool
		maxDelay  int64
		wantDelay int64 // of auto_retry_start; 0: no retry, the prompt fails at once
		wantError string
	}{
		{name: "default ignores the hint", wantDelay: 2000},
		{name: "respectRetryAfter waits the hint", respect: true, wantDelay: 5000},
		{name: "maxDelayMs below the hint fails the chain", respect: true, maxDelay: 3000, wantError: "retry.maxDelayMs=3000"},
		{name: "maxDelayMs alone also refuses a longer hint", maxDelay: 3000, wantError: "provider asked to wait 5000ms"},
		{name: "maxDelayMs above the hint caps nothing", respect: true, maxDelay: 8000, wantDelay: 5000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			s := newRealStack(t, func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 {
					w.Header().Set("retry-after", "5")
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusTooManyRequests)
					fmt.Fprint(w, `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			}, 50*time.Millisecond)
			st := settings.Defaults()
			st.Model.Provider, st.Model.Name = "openai", "gpt-test"
			st.Retry.RespectRetryAfter, st.Retry.MaxDelayMs = tc.respect, tc.maxDelay
			res, evs, err := s.run(t, client.PromptInput(st, "s-hint", "go"))
			var starts []agent.Event
			for _, e := range evs {
				if e.Type == agent.EventAutoRetryStart {
					starts = append(starts, e)
				}
			}
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) || len(starts) != 0 {
					t.Fatalf("result %+v err %v starts %+v; want an immediate failure naming %q", res, err, starts, tc.wantError)
				}
				return
			}
			if err != nil || res.Text != "ok" {
				t.Fatalf("prompt: %+v %v, want the answer after one retry", res, err)
			}
			if len(starts) != 1 || starts[0].DelayMs != tc.wantDelay || strings.Contains(starts[0].ErrorMessage, "retry-after") {
				t.Fatalf("retry starts %+v, want one with delayMs %d and no hint in the text", starts, tc.wantDelay)
			}
		})
	}
}
