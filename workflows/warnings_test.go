package workflows

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// Issue 15 item 2: what the session reader skipped over in the file the
// prompt found (garbage, a torn last line) is in the prompt's state, which
// starter state and RPC get_state print, during the prompt and after it.
func TestPrompt_SessionFileWarningsAreInTheState(t *testing.T) {
	h := newHarness(t)
	user := agent.TextMessage(agent.RoleUser, "earlier")
	if _, err := h.store.Append("s1", session.Entry{Type: session.TypeMessage, ID: "old", Timestamp: time.Now(), Message: &user}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(h.store.Path("s1"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("garbage\n{\"type\":\"mess"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res, err := h.run(input())
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	st := h.state()
	got := strings.Join(st.Warnings, "\n")
	for _, w := range []string{"line 3: not JSON, skipped", "line 4: incomplete last line"} {
		if !strings.Contains(got, w) {
			t.Errorf("state warnings lack %q:\n%s", w, got)
		}
	}
	if st.MessageCount != 3 {
		t.Errorf("state messageCount %d, want 3 (the earlier message kept, the prompt and its answer)", st.MessageCount)
	}
}
