package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// queryAnswerLimit is what a query's answer must stay under: the SDK
// warns above 512 KiB, and Temporal fails the query above 2 MiB
// (TMPRL1103). The events query's pages are agent.EventsPageBytes.
const queryAnswerLimit = 512 << 10

// bigMessage is n bytes of text of many lines, with characters JSON
// escapes (quotes, "<", tabs) among them.
func bigMessage(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %07d: \"quoted\" <tag> & text\tof the big prompt\n", i)
	}
	return b.String()[:n]
}

// Issue 20 item 8: a 1.9 MB user message, and three 1.9 MB follow-ups,
// do not make the events query answer more than a page: every page's
// JSON is under the query limit, the pages together are every event once,
// in seq order, up to prompt_end; each user message's message_start and
// message_end are a preview of its start that names its session entry,
// which holds the whole message.
// Spec 10.4.
func TestPrompt_HugeUserMessageEventsArePagedUnderTheLimit(t *testing.T) {
	h := newHarness(t)
	h.env.SetTestTimeout(time.Minute)
	in := input("hang:1s") // the follow-ups arrive during the first call
	in.Message = bigMessage(1_900_000)
	whole := map[string]bool{in.Message: true}
	h.at(300*time.Millisecond, func() {
		for i := 1; i <= 3; i++ {
			msg := fmt.Sprintf("follow-up %d\n", i) + bigMessage(1_900_000)
			whole[msg] = true
			h.signalMessage(agent.SignalFollowUp, msg)
		}
	})
	res, err := h.run(in)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}

	var evs []agent.Event
	pages := 0
	for after := int64(0); ; pages++ {
		page := h.eventsPage(after)
		b, err := json.Marshal(page)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > queryAnswerLimit {
			t.Fatalf("events page after seq %d is %d bytes of JSON, above %d", after, len(b), queryAnswerLimit)
		}
		if len(page) == 0 {
			break
		}
		evs = append(evs, page...)
		after = page[len(page)-1].Seq
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d (pages %d): %v", i, e.Seq, pages, types(evs))
		}
	}
	if n := len(evs); n == 0 || evs[n-1].Type != agent.EventPromptEnd || evs[n-1].Status != agent.StatusCompleted {
		t.Fatalf("events do not end with a completed prompt_end: %v", types(evs))
	}

	if pages < 2 {
		t.Fatalf("%d events in %d page(s): the test wants the events to need more than one", len(evs), pages)
	}

	sess, err := h.store.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]string{} // entry id -> whole text
	for _, e := range sess.Entries {
		if e.Message != nil && e.Message.Role == agent.RoleUser {
			if !whole[e.Message.Text()] {
				t.Fatalf("session entry %s holds %d bytes, not one of the messages sent", e.ID, len(e.Message.Text()))
			}
			users[e.ID] = e.Message.Text()
		}
	}
	seen := 0
	for _, e := range evs {
		if (e.Type != agent.EventMessageStart && e.Type != agent.EventMessageEnd) || e.Message == nil || e.Message.Role != agent.RoleUser {
			continue
		}
		seen++
		text, full := e.Message.Text(), users[e.EntryID]
		cut := strings.LastIndex(text, "\n[… ")
		if full == "" || cut < 1000 || !strings.HasPrefix(full, text[:cut]) ||
			!strings.HasSuffix(text, fmt.Sprintf(" more bytes: the whole message is session entry %s]", e.EntryID)) {
			t.Fatalf("%s of a user message: entry %q, %d bytes, ends %q", e.Type, e.EntryID, len(text), text[max(0, len(text)-120):])
		}
	}
	if len(users) != 4 || seen != 8 {
		t.Fatalf("%d user entries, %d user message_start/message_end events; want 4 and 8", len(users), seen)
	}
}

// Issue 20 item 8: the state query is bounded too: a session file with
// thousands of damaged lines gives the state the first warnings and a
// count of the rest, under the query limit.
// Spec 10.4.
func TestPrompt_StateWithThousandsOfWarningsIsBounded(t *testing.T) {
	h := newHarness(t)
	h.env.SetTestTimeout(time.Minute)
	user := agent.TextMessage(agent.RoleUser, "earlier")
	if _, err := h.store.Append("s1", session.Entry{Type: session.TypeMessage, ID: "old", Timestamp: time.Now(), Message: &user}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(h.store.Path("s1"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Repeat("garbage that is not an entry of the session\n", 6000)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res, err := h.run(input())
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	st := h.state()
	b, _ := json.Marshal(st)
	if len(b) > 128<<10 {
		t.Fatalf("state is %d bytes of JSON with %d warnings", len(b), len(st.Warnings))
	}
	if len(st.Warnings) == 0 || !strings.Contains(st.Warnings[0], "line 3: not JSON, skipped") ||
		!strings.Contains(st.Warnings[len(st.Warnings)-1], "more warnings") {
		t.Fatalf("state warnings %d: first %q, last %q", len(st.Warnings), st.Warnings[0], st.Warnings[len(st.Warnings)-1])
	}
}

// Issue 20 item 8 (history per run): a prompt with a 1.9 MB message that
// continues as new does not copy the message into the next run's input
// (only its start, for people reading the history): the next run's
// history starts small, and it completes the prompt with the whole
// message in the session, written once.
// Spec 10.4.
func TestLoop_ContinueAsNewDoesNotCarryAHugeMessage(t *testing.T) {
	h := newHarness(t)
	h.env.SetTestTimeout(time.Minute)
	in := h.toolInput(`tool:ls {}`, `tool:ls {}`, `text:done`)
	in.Message = bigMessage(1_900_000)
	in.Agent.ContinueAsNewEvents = 20
	h.env.SetCurrentHistoryLength(25)
	h.env.ExecuteWorkflow(PromptWorkflowName, in)
	var can *workflow.ContinueAsNewError
	if err := h.env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("first run ended with %v, want continue-as-new", err)
	}
	if n := can.Input.Size(); n > 64<<10 {
		t.Fatalf("the continued run's input is %d bytes: the message was carried", n)
	}
	var next PromptInput
	if err := decodePayload(can, &next); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(in.Message, strings.TrimSuffix(next.Message, "…")) || next.Message == "" {
		t.Fatalf("the continued run's message %.80q is not the start of the prompt's", next.Message)
	}
	h2 := newHarness(t)
	h2.env.SetTestTimeout(time.Minute)
	h2.store, h2.acts.Sessions = h.store, h.store
	h2.workspace = h.workspace
	res, err := h2.run(next)
	if err != nil || res.Text != "done" {
		t.Fatalf("continued run: %+v %v", res, err)
	}
	if got := h.userTexts(res.LeafID); len(got) != 1 || got[0] != in.Message {
		t.Fatalf("user messages on the branch: %d (want the whole message once)", len(got))
	}
}
