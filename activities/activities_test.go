package activities

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/session"
)

type fixture struct {
	env   *testsuite.TestActivityEnvironment
	store *session.Store
	acts  *Activities
}

func newFixture(t *testing.T, prov llm.Provider) *fixture {
	t.Helper()
	store, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	acts := &Activities{
		Sessions:          store,
		Provider:          func(string) (llm.Provider, error) { return prov, nil },
		HeartbeatInterval: 20 * time.Millisecond,
	}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(acts.CallModel, activityName(CallModelName))
	env.RegisterActivityWithOptions(acts.AppendEntries, activityName(AppendEntriesName))
	env.RegisterActivityWithOptions(acts.LoadSession, activityName(LoadSessionName))
	f := &fixture{env: env, store: store, acts: acts}
	user := agent.TextMessage(agent.RoleUser, "hello")
	if _, err := store.Append("s1", session.Entry{Type: session.TypeMessage, ID: "u1", Timestamp: time.Now(), Message: &user}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) call(t *testing.T, in CallModelInput) (CallModelResult, error) {
	t.Helper()
	v, err := f.env.ExecuteActivity(CallModelName, in)
	var res CallModelResult
	if err == nil {
		if gerr := v.Get(&res); gerr != nil {
			t.Fatal(gerr)
		}
	}
	return res, err
}

func input(entryID string, faults ...string) CallModelInput {
	return CallModelInput{SessionID: "s1", LeafID: "u1", EntryID: entryID,
		Model: ModelRef{Provider: "scripted", Name: "scripted-1", Faults: faults}}
}

// SPEC 7: a provider error is data: the activity succeeds with
// stopReason "error" and the structured fields, and the session file
// keeps the error message.
func TestCallModel_ProviderErrorIsData(t *testing.T) {
	f := newFixture(t, scripted.New(scripted.Options{}))
	res, err := f.call(t, input("a1", "[529 overloaded_error] Overloaded"))
	if err != nil {
		t.Fatalf("activity failed for a provider error: %v", err)
	}
	if res.StopReason != agent.StopReasonError || res.ErrorMessage != "Overloaded" || res.ErrorStatus != 529 || res.ErrorType != "overloaded_error" {
		t.Fatalf("result %+v", res)
	}
	sess, _ := f.store.Load("s1")
	e, ok := sess.Get("a1")
	if !ok || e.ParentID != "u1" || e.Message.StopReason != agent.StopReasonError {
		t.Fatalf("session entry %+v", e)
	}
}

// Entry ids make the activity idempotent: a re-run of a completed call
// returns the recorded message and does not call the model again.
func TestCallModel_RerunDoesNotCallModelTwice(t *testing.T) {
	var calls atomic.Int32
	prov := llm.ProviderFunc(func(ctx context.Context, req llm.Request) agent.Message {
		calls.Add(1)
		m := agent.TextMessage(agent.RoleAssistant, "answer")
		m.StopReason = agent.StopReasonStop
		return m
	})
	f := newFixture(t, prov)
	for i := 0; i < 2; i++ {
		res, err := f.call(t, input("a1"))
		if err != nil || res.Text != "answer" {
			t.Fatalf("run %d: %+v %v", i, res, err)
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("model called %d times, want 1", calls.Load())
	}
	sess, _ := f.store.Load("s1")
	if len(sess.Entries) != 2 {
		t.Fatalf("session has %d entries, want 2", len(sess.Entries))
	}
}

// SPEC 5/7: cancellation reaches the provider (through the heartbeat
// loop); the activity writes an aborted message and reports cancellation.
// An abort is a cancel the workflow asked for, which the SDK delivers by
// cancelling the activity's context with a CanceledError (a heartbeat's
// response said cancel requested).
func TestCallModel_CancellationReturnsAborted(t *testing.T) {
	f := newFixture(t, scripted.New(scripted.Options{}))
	ctx, cancel := context.WithCancelCause(context.Background())
	f.env.SetTestTimeout(10 * time.Second)
	f.env.SetWorkerOptions(workerOptionsWithContext(ctx))
	time.AfterFunc(100*time.Millisecond, func() { cancel(temporal.NewCanceledError()) })
	start := time.Now()
	_, err := f.call(t, input("a1", "hang"))
	if err == nil {
		t.Fatal("a cancelled call reported success")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("cancellation did not stop the hanging call")
	}
	sess, _ := f.store.Load("s1")
	e, ok := sess.Get("a1")
	if !ok || e.Message.StopReason != agent.StopReasonAborted {
		t.Fatalf("session entry %+v, want an aborted assistant message", e)
	}
}

// Issue 15 item 4: a context cancelled by anything but the workflow is no
// abort. The SDK cancels it with the heartbeat's error as the cause when
// heartbeats fail (the server unreachable, or no longer knowing the call)
// and with context.Canceled when the worker shuts down; the deadline ends
// it with DeadlineExceeded. The call stops, reports the cancellation and
// writes nothing, so the workflow's record of the lost call (a connection
// error) is what the session file keeps.
func TestCallModel_CancelNobodyAskedForWritesNothing(t *testing.T) {
	for name, cause := range cancelsNobodyAskedFor {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, scripted.New(scripted.Options{}))
			ctx, cancel := context.WithCancelCause(context.Background())
			f.env.SetTestTimeout(10 * time.Second)
			f.env.SetWorkerOptions(workerOptionsWithContext(ctx))
			time.AfterFunc(100*time.Millisecond, func() { cancel(cause) })
			start := time.Now()
			if _, err := f.call(t, input("a1", "hang")); err == nil {
				t.Fatal("a cancelled call reported success")
			}
			if time.Since(start) > 5*time.Second {
				t.Fatal("cancellation did not stop the hanging call")
			}
			sess, _ := f.store.Load("s1")
			if e, ok := sess.Get("a1"); ok {
				t.Fatalf("session entry %+v written, want none (nobody aborted the call)", e.Message)
			}
		})
	}
}

// The activity heartbeats on a ticker while the model works, so a slow
// model is not mistaken for a dead worker.
func TestCallModel_HeartbeatsWhileModelWorks(t *testing.T) {
	f := newFixture(t, scripted.New(scripted.Options{Latency: 300 * time.Millisecond}))
	var beats atomic.Int32
	f.acts.recordHeartbeat = func(context.Context, ...any) { beats.Add(1) }
	if _, err := f.call(t, input("a1")); err != nil {
		t.Fatal(err)
	}
	if n := beats.Load(); n < 5 {
		t.Fatalf("%d heartbeats during a 300 ms call with a 20 ms ticker, want >= 5", n)
	}
}

// Secrets never leave the activity: an error that echoes the key is
// redacted in the result and in the session file.
func TestCallModel_RedactsEchoedSecret(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	prov := llm.ProviderFunc(func(ctx context.Context, req llm.Request) agent.Message {
		return llm.ErrorMessage(req, "401 Incorrect API key provided: "+req.Secret)
	})
	f := newFixture(t, prov)
	f.acts.Credentials = staticCreds{id: "c1", secret: key}
	res, err := f.call(t, input("a1"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.ErrorMessage, key) || res.CredentialID != "c1" {
		t.Fatalf("result leaks the key or lacks the credential id: %+v", res)
	}
	raw, _ := readFile(f.store.Path("s1"))
	if strings.Contains(raw, key) || strings.Contains(raw, "0123456789abcdef") {
		t.Fatal("session file contains the key")
	}
}

// A bad session id is a non-retryable error naming the problem.
func TestCallModel_BadSessionIDIsNonRetryable(t *testing.T) {
	f := newFixture(t, scripted.New(scripted.Options{}))
	in := input("a1")
	in.SessionID = "../etc"
	_, err := f.call(t, in)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.NonRetryable() || appErr.Type() != ErrTypeBadInput {
		t.Fatalf("error %v, want a non-retryable %s", err, ErrTypeBadInput)
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ name, in, secret, want string }{
		{"exact secret", "bad key abcdefgh12345678 given", "abcdefgh12345678", "bad key [redacted] given"},
		{"openai style", "Incorrect API key provided: sk-proj-AbCdEf0123456789.", "", "Incorrect API key provided: sk-[redacted]."},
		{"short secret kept", "code 1234", "1234", "code 1234"},
		{"no key", "503 Service Unavailable", "", "503 Service Unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newMessageRedactor(tc.secret).text(tc.in); got != tc.want {
				t.Fatalf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// The scripted model's fault script counts the prompt's model calls from
// the prompt's user message (PromptEntryID): a steer message delivered
// since restarts Attempt (the calls since the last user message), and
// FaultOffset holds the calls before it, so the script goes on where it
// was. Without PromptEntryID the count starts at the last user message.
func TestCallModel_FaultScriptCountsFromThePromptsMessage(t *testing.T) {
	f := newFixture(t, scripted.New(scripted.Options{}))
	script := []string{"503 first", "503 second", "text:third"}
	if res, _ := f.call(t, input("a1", script...)); res.ErrorMessage != "503 first" {
		t.Fatalf("first call %+v, want the script's first element", res)
	}
	steer := agent.TextMessage(agent.RoleUser, "steer")
	if _, err := f.store.Append("s1", session.Entry{Type: session.TypeMessage, ID: "u2", ParentID: "u1", Timestamp: time.Now(), Message: &steer}); err != nil {
		t.Fatal(err)
	}
	in := input("a2", script...)
	in.LeafID, in.PromptEntryID = "u2", "u1"
	if res, _ := f.call(t, in); res.ErrorMessage != "503 second" {
		t.Fatalf("call after the steer message %+v, want the script's second element", res)
	}
	in = input("a3", script...)
	in.LeafID = "u2"
	if res, _ := f.call(t, in); res.ErrorMessage != "503 second" {
		t.Fatalf("call without PromptEntryID %+v, want the second element (one call since u2)", res)
	}
}

// WrapProvider puts the wrapper between CallModel and the provider: the
// call's answer is the wrapper's; a provider name the worker refuses
// stays refused (the wrapper is never asked).
func TestWrapProvider_CallsGoThroughTheWrapper(t *testing.T) {
	f := newFixture(t, scripted.New(scripted.Options{}))
	f.acts.WrapProvider(func(inner llm.Provider) llm.Provider {
		return llm.ProviderFunc(func(ctx context.Context, req llm.Request) agent.Message {
			m := inner.Complete(ctx, req)
			m.Content = []agent.ContentBlock{{Type: agent.BlockText, Text: "wrapped"}}
			return m
		})
	})
	res, err := f.call(t, input("a1"))
	if err != nil || res.Text != "wrapped" {
		t.Fatalf("call through the wrapper: %+v %v", res, err)
	}

	refused := errors.New("no such provider")
	a := &Activities{Provider: func(string) (llm.Provider, error) { return nil, refused }}
	asked := false
	a.WrapProvider(func(p llm.Provider) llm.Provider { asked = true; return p })
	if _, err := a.Provider("nope"); !errors.Is(err, refused) || asked {
		t.Fatalf("refused provider: err %v, wrapper asked %v", err, asked)
	}
}
