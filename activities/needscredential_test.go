package activities_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
)

// A prompt naming a provider the worker has no credential for fails at
// once with a non-retryable credentials error that says what to do; a
// provider with its own base URL (a local server) needs none.
func TestCallModel_ProviderWithoutCredentialFailsClearly(t *testing.T) {
	for _, v := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	s := settings.Defaults()
	s.DataDir = t.TempDir()
	s.Model.Provider, s.Model.BaseURL = "openai", "http://127.0.0.1:1/v1" // keyless: a local server
	acts, err := app.NewActivities(s)
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
	call := func(provider, entry string) error {
		_, err := env.ExecuteActivity(activities.CallModelName, activities.CallModelInput{
			SessionID: "s", LeafID: "u1", EntryID: entry,
			Model: activities.ModelRef{Provider: provider, Name: "m"}})
		return err
	}

	err = call("anthropic", "a1")
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != activities.ErrTypeCredentials || !appErr.NonRetryable() {
		t.Fatalf("anthropic without a key: %v, want a non-retryable %s error", err, activities.ErrTypeCredentials)
	}
	if msg := err.Error(); !strings.Contains(msg, "provider anthropic") || !strings.Contains(msg, "starter auth add anthropic") {
		t.Errorf("error %q should name the provider and how to add a credential", msg)
	}
	// scripted needs no credential, but only a scripted worker serves it
	// (internal/app.NewProviders): this openai worker refuses it as bad
	// input, not for a missing credential.
	if err := call("scripted", "a2"); !errors.As(err, &appErr) || appErr.Type() != activities.ErrTypeBadInput ||
		!strings.Contains(err.Error(), "not served by this worker") {
		t.Errorf("scripted on an openai worker: %v, want it refused as not served", err)
	}
	// openai with model.baseUrl is keyless: the call is made (and fails
	// to connect, as data), no credentials error.
	if err := call("openai", "a3"); err != nil {
		t.Errorf("openai with its own base URL needs no credential: %v", err)
	}
}
