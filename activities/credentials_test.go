package activities_test

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
)

// credsWorker is the worker's wiring of the credentials (app.NewCredentials
// on settings with a data dir of its own) under the activity test
// environment, with the scripted model for every provider.
type credsWorker struct {
	env   *testsuite.TestActivityEnvironment
	creds *auth.File
	store *session.Store
	// fresh is another environment of the same activities: the SDK's
	// test environment runs one activity at a time, so concurrent calls
	// take one each.
	fresh func() *testsuite.TestActivityEnvironment
}

func newCredsWorker(t *testing.T, s settings.Settings, creds ...auth.Credential) *credsWorker {
	t.Helper()
	return newCredsWorkerWith(t, s, nil, creds...)
}

// newCredsWorkerWith is newCredsWorker with adjust applied to the
// activities before they are registered.
func newCredsWorkerWith(t *testing.T, s settings.Settings, adjust func(*activities.Activities), creds ...auth.Credential) *credsWorker {
	t.Helper()
	s.DataDir = t.TempDir()
	c, err := app.NewCredentials(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, cr := range creds {
		if err := c.Add(cr); err != nil {
			t.Fatal(err)
		}
	}
	store, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prov := scripted.New(scripted.Options{Reply: "done"})
	acts := &activities.Activities{
		Sessions:          store,
		Provider:          func(string) (llm.Provider, error) { return prov, nil },
		Credentials:       c,
		HeartbeatInterval: 20 * time.Millisecond,
	}
	if adjust != nil {
		adjust(acts)
	}
	fresh := func() *testsuite.TestActivityEnvironment {
		var suite testsuite.WorkflowTestSuite
		suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivityWithOptions(acts.CallModel, activity.RegisterOptions{Name: activities.CallModelName})
		env.RegisterActivityWithOptions(acts.MarkUsageLimitReached, activity.RegisterOptions{Name: activities.MarkUsageLimitReachedName})
		return env
	}
	return &credsWorker{env: fresh(), creds: c, store: store, fresh: fresh}
}

func (w *credsWorker) markUsageLimit(t *testing.T, in activities.MarkUsageLimitInput) activities.MarkUsageLimitResult {
	t.Helper()
	v, err := w.env.ExecuteActivity(activities.MarkUsageLimitReachedName, in)
	if err != nil {
		t.Fatalf("MarkUsageLimitReached(%+v): %v", in, err)
	}
	var res activities.MarkUsageLimitResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

// SPEC 3 step 7 (model fallback): MarkUsageLimitReached hands the session's
// model to the store; when the usage limit leaves no credential, the
// session moves to the next of retry.fallbackModels (a switch, so the
// retry waits 0 ms). Another free credential comes first; the fallback
// list belongs to model.provider only; the last model has no next one.
func TestMarkUsageLimitReached_FallsBackToNextModel(t *testing.T) {
	key := func(id, provider string) auth.Credential {
		return auth.Credential{ID: id, Provider: provider, Secret: "sk-" + strings.Repeat(id, 4) + "0123456789"}
	}
	cases := []struct {
		name     string
		fallback []string
		creds    []auth.Credential
		in       activities.MarkUsageLimitInput
		want     activities.MarkUsageLimitResult
		// wantOtherCredential: switched to a credential (its id depends on
		// the session hash), no model change.
		wantOtherCredential bool
	}{
		{name: "only credential blocked: first fallback model",
			fallback: []string{"claude-b", "claude-c"}, creds: []auth.Credential{key("one", "anthropic")},
			in:   activities.MarkUsageLimitInput{Provider: "anthropic", Model: "claude-a", SessionID: "s1"},
			want: activities.MarkUsageLimitResult{Switched: true, Model: "claude-b"}},
		{name: "running a fallback model: the next one",
			fallback: []string{"claude-b", "claude-c"}, creds: []auth.Credential{key("one", "anthropic")},
			in:   activities.MarkUsageLimitInput{Provider: "anthropic", Model: "claude-b", SessionID: "s1"},
			want: activities.MarkUsageLimitResult{Switched: true, Model: "claude-c"}},
		{name: "running the last fallback model: no switch",
			fallback: []string{"claude-b", "claude-c"}, creds: []auth.Credential{key("one", "anthropic")},
			in: activities.MarkUsageLimitInput{Provider: "anthropic", Model: "claude-c", SessionID: "s1"}},
		{name: "a free credential comes before a fallback model",
			fallback: []string{"claude-b"}, creds: []auth.Credential{key("one", "anthropic"), key("two", "anthropic")},
			in:                  activities.MarkUsageLimitInput{Provider: "anthropic", Model: "claude-a", SessionID: "s1"},
			wantOtherCredential: true},
		{name: "no fallback models configured",
			creds: []auth.Credential{key("one", "anthropic")},
			in:    activities.MarkUsageLimitInput{Provider: "anthropic", Model: "claude-a", SessionID: "s1"}},
		{name: "fallback models are model.provider's only",
			fallback: []string{"claude-b"}, creds: []auth.Credential{key("one", "openai")},
			in: activities.MarkUsageLimitInput{Provider: "openai", Model: "gpt-a", SessionID: "s1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := settings.Defaults()
			s.Model.Provider, s.Model.Name = "anthropic", "claude-a"
			s.Retry.FallbackModels = tc.fallback
			w := newCredsWorker(t, s, tc.creds...)
			got := w.markUsageLimit(t, tc.in)
			if tc.wantOtherCredential {
				if !got.Switched || got.CredentialID == "" || got.Model != "" {
					t.Fatalf("result %+v, want a switch to the other credential", got)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("result %+v, want %+v", got, tc.want)
			}
		})
	}
}

// An auth store that cannot be read fails the model call with a
// non-retryable CredentialsError naming the store's problem, instead of
// calling the model without the credential; the secret is not in the
// error, no model call is made and nothing is written to the session.
func TestCallModel_UnreadableAuthStoreFailsWithCredentialsError(t *testing.T) {
	const secret = "sk-ant-api03-UNREADABLE0123456789abcdef"
	s := settings.Defaults()
	s.Model.Provider = "anthropic"
	w := newCredsWorker(t, s, auth.Credential{ID: "main", Provider: "anthropic", Secret: secret})
	user := agent.TextMessage(agent.RoleUser, "hello")
	if _, err := w.store.Append("s1", session.Entry{Type: session.TypeMessage, ID: "u1", Timestamp: time.Now(), Message: &user}); err != nil {
		t.Fatal(err)
	}
	// The file's mode changes under the running worker.
	if err := os.Chmod(w.creds.Path(), 0o644); err != nil {
		t.Fatal(err)
	}

	_, err := w.env.ExecuteActivity(activities.CallModelName, activities.CallModelInput{
		SessionID: "s1", LeafID: "u1", EntryID: "a1",
		Model: activities.ModelRef{Provider: "anthropic", Name: "claude-a"},
	})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != activities.ErrTypeCredentials || !appErr.NonRetryable() {
		t.Fatalf("CallModel error %v, want a non-retryable %s", err, activities.ErrTypeCredentials)
	}
	msg := appErr.Error()
	for _, want := range []string{"select credential for provider anthropic", "chmod 600"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "UNREADABLE") || strings.ContainsAny(msg, "\n\r") {
		t.Errorf("message %q holds the secret or spans lines", msg)
	}
	sess, lerr := w.store.Load("s1")
	if lerr != nil {
		t.Fatal(lerr)
	}
	if _, ok := sess.Get("a1"); ok {
		t.Fatal("an assistant entry was written for a call that never ran")
	}
}
