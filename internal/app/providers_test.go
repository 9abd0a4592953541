package app

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
)

// The scripted fake answers only on a worker whose own model.provider is
// scripted; a worker configured for a real provider refuses a prompt
// naming scripted and says what it serves and what to set. Real
// providers are served whatever model.provider is.
func TestNewProviders_ScriptedOnlyOnAScriptedWorker(t *testing.T) {
	for _, tc := range []struct {
		name, worker, prompt string
		wantErr              []string // substrings; nil: served
	}{
		{name: "scripted worker serves scripted", worker: "scripted", prompt: "scripted"},
		{name: "scripted worker serves anthropic", worker: "scripted", prompt: "anthropic"},
		{name: "anthropic worker refuses scripted", worker: "anthropic", prompt: "scripted",
			wantErr: []string{"scripted (the offline fake) is not served by this worker", "serves anthropic, openai",
				"set the starter's model.provider", "to anthropic, the worker's"}},
		{name: "openai worker refuses scripted", worker: "openai", prompt: "scripted",
			wantErr: []string{"serves anthropic, openai;", "to openai, the worker's"}},
		{name: "openai worker serves anthropic", worker: "openai", prompt: "anthropic"},
		{name: "unknown provider names what is served", worker: "anthropic", prompt: "gemini",
			wantErr: []string{`unknown model provider "gemini"`, "serves anthropic, openai"}},
		{name: "unknown provider on a scripted worker", worker: "scripted", prompt: "gemini",
			wantErr: []string{"serves anthropic, openai, scripted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := settings.Defaults()
			s.Model.Provider = tc.worker
			p, err := NewProviders(s, nil)(tc.prompt)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("provider %s on a %s worker: %v", tc.prompt, tc.worker, err)
				}
				if tc.prompt != "scripted" && p == nil {
					t.Fatalf("provider %s: nil", tc.prompt)
				}
				return
			}
			if err == nil {
				t.Fatalf("provider %s on a %s worker served, want an error", tc.prompt, tc.worker)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
			if tc.prompt == "scripted" && !errors.Is(err, ErrScriptedNotServed) {
				t.Errorf("error %v is not ErrScriptedNotServed", err)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// A prompt naming scripted on a worker started for anthropic fails its
// model call at once, without retries (the prompt fails with the
// message), and the session gets no answer from the fake.
func TestCallModel_ScriptedRefusedOnARealWorker(t *testing.T) {
	s := settings.Defaults()
	s.DataDir = t.TempDir()
	s.Model.Provider = "anthropic"
	acts, err := NewActivities(s)
	if err != nil {
		t.Fatal(err)
	}
	user := agent.TextMessage(agent.RoleUser, "hi")
	if _, err := acts.Sessions.Append("s", session.Entry{Type: session.TypeMessage, ID: "u1",
		Timestamp: time.Now().UTC(), Message: &user}); err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(acts.CallModel, activity.RegisterOptions{Name: activities.CallModelName})
	_, err = env.ExecuteActivity(activities.CallModelName, activities.CallModelInput{
		SessionID: "s", LeafID: "u1", EntryID: "a1",
		Model: activities.ModelRef{Provider: "scripted", Name: "scripted-1"}})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.NonRetryable() || appErr.Type() != activities.ErrTypeBadInput {
		t.Fatalf("CallModel naming scripted on an anthropic worker: %v, want a non-retryable %s", err, activities.ErrTypeBadInput)
	}
	if !strings.Contains(err.Error(), "serves anthropic, openai") {
		t.Errorf("error %q does not name the worker's providers", err)
	}
	sess, err := acts.Sessions.Load("s")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sess.Get("a1"); ok {
		t.Error("an answer was written for the refused call")
	}
}
