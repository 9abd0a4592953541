package activities

import (
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// lockedBuffer is a log sink the activity's goroutines write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Issue 15 item 2: every problem the session reader skipped over in a
// hand-edited file — garbage, a duplicate id, wrong field types, a torn
// last line — reaches the worker log and the prompt's result (whence the
// state query, starter state and RPC get_state), not only Session.Warnings.
func TestBeginPrompt_SessionFileWarningsReachTheWorkerLogAndTheResult(t *testing.T) {
	store, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	user := agent.TextMessage(agent.RoleUser, "hello")
	if _, err := store.Append("s1", session.Entry{Type: session.TypeMessage, ID: "u1", Timestamp: time.Now(), Message: &user}); err != nil {
		t.Fatal(err)
	}
	dup, _ := json.Marshal(session.Entry{Type: session.TypeMessage, ID: "u1", ParentID: "", Timestamp: time.Now(), Message: &user})
	f, err := os.OpenFile(store.Path("s1"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Join([]string{
		"garbage",                                // line 3
		string(dup),                              // line 4
		`{"type":"message","id":7,"message":{}}`, // line 5
		`{"type":"mess`,                          // line 6, torn
	}, "\n")
	if _, err := f.WriteString(bad); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := []string{
		"line 3: not JSON, skipped",
		`line 4: duplicate entry id "u1", skipped`,
		`line 5: field "id" has the wrong type`,
		"line 6: incomplete last line",
	}

	var log lockedBuffer
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(&log, nil))))
	env := suite.NewTestActivityEnvironment()
	acts := &Activities{Sessions: store}
	env.RegisterActivityWithOptions(acts.BeginPrompt, activityName(BeginPromptName))
	v, err := env.ExecuteActivity(BeginPromptName, BeginPromptInput{SessionID: "s1", UserEntryID: "u2", Message: "again"})
	if err != nil {
		t.Fatal(err)
	}
	var res BeginPromptResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	if res.LeafID != "u2" || res.MessageCount != 2 {
		t.Fatalf("begin %+v, want the new user message after u1", res)
	}
	joined := strings.Join(res.Warnings, "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("result warnings lack %q:\n%s", w, joined)
		}
		if !strings.Contains(log.String(), strings.ReplaceAll(w, `"`, `\"`)) { // as the text handler quotes it
			t.Errorf("worker log lacks %q:\n%s", w, log.String())
		}
	}
}
