package tui

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/testserver"
)

// liveDriver is a driver on a prompt of its own ("hello", started as
// Enter starts one) whose events the test gives the Model as plain
// values, numbered in order, as the follower delivers them; a
// message_end's message is written to the session file first, as the
// worker writes its entry before the event. The backend reads the
// session through the package's worker (served), whose store the test
// writes; the session's id is the test's own.
type liveDriver struct {
	*driver
	events chan tea.Msg
	seq    int64
	store  *session.Store
	id     string
	leaf   string
}

func newLiveDriver(t *testing.T) *liveDriver {
	t.Helper()
	d := newStoreDriver(t, nil)
	d.startedHere("hello")
	return d
}

// newStoreDriver is a liveDriver before its prompt starts, on a session
// whose file holds the history (id, message pairs: the messages of
// earlier prompts) when the chat opens.
func newStoreDriver(t *testing.T, history func(record func(id string, m agent.Message))) *liveDriver {
	t.Helper()
	id := testserver.Session("live")
	b := served(t, id, nil)
	store, err := session.Open(filepath.Join(b.Settings().DataDir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Init(id, session.Header{Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	d := &liveDriver{events: make(chan tea.Msg, 256), store: store, id: id}
	if history != nil {
		history(func(id string, m agent.Message) { d.record(t, id, m) })
	}
	d.driver = newDriver(t, b)
	return d
}

// startedHere is what Enter on text does once the backend started its
// prompt.
func (d *liveDriver) startedHere(text string) {
	d.m.entries = append(d.m.entries, entry{kind: entryUser, text: text})
	d.send(promptStartedMsg{prompt: client.Prompt{WorkflowID: "session-" + d.id, RunID: "run-1"}, events: d.events, message: text})
}

// record writes a message as a session entry.
func (d *liveDriver) record(t *testing.T, id string, m agent.Message) {
	t.Helper()
	if _, err := d.store.Append(d.id, session.Entry{Type: session.TypeMessage, ID: id, ParentID: d.leaf, Timestamp: time.Now().UTC(), Message: &m}); err != nil {
		t.Fatal(err)
	}
	d.leaf = id
}

// emit gives the Model events and waits until it has shown the last one;
// after prompt_end the stream ends, as the follower's does.
func (d *liveDriver) emit(events ...agent.Event) {
	d.t.Helper()
	for _, e := range events {
		d.seq++
		e.Seq = d.seq
		if e.Time.IsZero() {
			e.Time = time.Now().UTC()
		}
		if e.Type == agent.EventMessageEnd && e.Message != nil && e.EntryID != "" {
			d.record(d.t, e.EntryID, *e.Message)
		}
		d.events <- eventMsg{event: e}
		if e.Type == agent.EventPromptEnd {
			d.events <- streamEndMsg{}
		}
	}
	last := d.seq
	d.until(fmt.Sprintf("event %d shown", last), func() bool { return d.m.lastSeq == last })
}

// shows fails unless the screen holds every want, and none of the nots.
func (d *driver) shows(step string, want []string, not []string) {
	d.t.Helper()
	screen := d.m.View()
	for _, w := range want {
		if !strings.Contains(screen, w) {
			d.t.Errorf("%s: screen lacks %q:\n%s", step, w, screen)
		}
	}
	for _, n := range not {
		if strings.Contains(screen, n) {
			d.t.Errorf("%s: screen shows %q:\n%s", step, n, screen)
		}
	}
}

func delta(entryID string, attempt, index int, typ, text string) agent.Event {
	return agent.Event{Type: agent.EventMessageUpdate, EntryID: entryID, AssistantMessageEvent: &agent.AssistantMessageEvent{
		Type: typ, ContentIndex: index, Delta: text, Attempt: attempt}}
}

func answer(entryID string, msg agent.Message) agent.Event {
	return agent.Event{Type: agent.EventMessageEnd, EntryID: entryID, Message: &msg}
}

func textAnswer(text string) agent.Message {
	msg := agent.TextMessage(agent.RoleAssistant, text)
	msg.StopReason = agent.StopReasonStop
	return msg
}

// Issue 11: the assistant's text shows as its deltas arrive, thinking
// too; message_end's stored message then replaces what streamed.
func TestModel_StreamedTextThenMessageEndWins(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(agent.Event{Type: agent.EventAgentStart}, agent.Event{Type: agent.EventMessageStart, EntryID: "e2"},
		delta("e2", 0, 0, agent.DeltaThinking, "Pondering"))
	d.shows("thinking", []string{"Pondering"}, nil)
	d.emit(delta("e2", 0, 1, agent.DeltaText, "Draft"), delta("e2", 0, 1, agent.DeltaText, " answr"))
	d.shows("partial text", []string{"Pondering", "Draft answr", "Working… (esc to abort)"}, nil)
	d.emit(delta("e2", 0, 1, agent.DeltaText, " so far"))
	d.shows("more text", []string{"Draft answr so far"}, nil)

	d.emit(answer("e2", textAnswer("Final answer.")))
	d.shows("message_end", []string{"Final answer.", "Pondering"}, []string{"Draft answr"})
	if n := strings.Count(d.m.View(), "Final answer."); n != 1 {
		t.Errorf("the answer shows %d times, want once:\n%s", n, d.m.View())
	}
	// A snapshot read before message_end may arrive after it: stale.
	d.emit(delta("e2", 0, 1, agent.DeltaText, " late piece"))
	d.shows("late delta", []string{"Final answer."}, []string{"late piece"})
	d.emit(agent.Event{Type: agent.EventAgentEnd}, agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusCompleted})
	d.shows("prompt end", []string{"Final answer.", "Pondering"}, nil)
}

// Issue 11: a retry's deltas supersede the failed attempt's partial text;
// an error message_end drops it too; a stale delta of the earlier attempt
// brings nothing back.
func TestModel_RetryAttemptSupersedesPartialText(t *testing.T) {
	t.Run("dropped at the failed attempt's message_end", func(t *testing.T) {
		d := newLiveDriver(t)
		d.emit(agent.Event{Type: agent.EventAgentStart}, delta("e2", 0, 0, agent.DeltaText, "first try text"))
		d.shows("attempt 1 streams", []string{"first try text"}, nil)
		fail := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonError, ErrorMessage: "overloaded"}
		d.emit(answer("e2", fail), agent.Event{Type: agent.EventAgentEnd, WillRetry: true},
			agent.Event{Type: agent.EventAutoRetryStart, Attempt: 1, MaxAttempts: 3, DelayMs: 1000, ErrorMessage: "overloaded"})
		d.shows("backoff", []string{"✗ overloaded", "Retrying (1/3) in 1s… (esc to cancel)"}, []string{"first try text"})
		d.emit(agent.Event{Type: agent.EventAgentStart}, delta("e3", 1, 0, agent.DeltaText, "second try"))
		d.shows("attempt 2 streams", []string{"✗ overloaded", "second try", "Working… (esc to abort)"}, []string{"first try text"})
		d.emit(answer("e3", textAnswer("second try, stored")))
		d.shows("attempt 2 ends", []string{"second try, stored"}, []string{"first try text"})
	})
	t.Run("superseded by a later attempt's deltas", func(t *testing.T) {
		// A follower that attaches late, or coalesced snapshots, can
		// deliver the retry's text before anything else of the failure.
		d := newLiveDriver(t)
		d.emit(agent.Event{Type: agent.EventAgentStart}, delta("e2", 0, 0, agent.DeltaText, "first try text"))
		d.emit(delta("e3", 1, 0, agent.DeltaText, "second try"))
		d.shows("attempt 2 streams", []string{"second try"}, []string{"first try text"})
		d.emit(delta("e2", 0, 0, agent.DeltaText, " more of the first"))
		d.shows("stale attempt 1", []string{"second try"}, []string{"first try text", "more of the first"})
		d.emit(delta("e3", 1, 0, agent.DeltaText, " goes on"))
		d.shows("attempt 2 goes on", []string{"second try goes on"}, nil)
	})
}

// Issue 11: a tool call shows its arguments as they stream, then the
// announced call, its live output (each update replaces the last, only the
// latest lines shown), and the result that tool_execution_end brings.
func TestModel_ToolCallArgsAndLiveOutput(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(agent.Event{Type: agent.EventAgentStart}, delta("e2", 0, 0, agent.DeltaText, "Running bash."),
		delta("e2", 0, 1, agent.DeltaToolCall, `{"command":"make`))
	d.shows("arguments stream", []string{"Running bash.", `▶ {"command":"make`}, nil)
	d.emit(delta("e2", 0, 1, agent.DeltaToolCall, ` test"}`))
	d.shows("arguments streamed", []string{`▶ {"command":"make test"}`}, nil)

	msg := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse, Content: []agent.ContentBlock{
		{Type: "text", Text: "Running bash."},
		{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "call_1", Name: "bash", Arguments: json.RawMessage(`{"command":"make test"}`)}},
	}}
	d.emit(answer("e2", msg))
	d.shows("call announced", []string{"Running bash.", "▶ bash make test (pending)"}, []string{`{"command"`})

	args := json.RawMessage(`{"command":"make test"}`)
	d.emit(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "call_1", ToolName: "bash", Args: args})
	d.shows("call runs", []string{"▶ bash make test"}, []string{"(pending)"})
	update := func(out string) agent.Event {
		return agent.Event{Type: agent.EventToolExecutionUpdate, ToolCallID: "call_1", ToolName: "bash", Args: args,
			PartialResult: &agent.ToolResult{Content: []agent.ContentBlock{{Type: "text", Text: out}}}}
	}
	d.emit(update("ok  pkg/one\n"))
	d.shows("first output", []string{"  ok  pkg/one"}, nil)
	d.emit(update("ok  pkg/one\nok  pkg/two\n"))
	d.shows("second output", []string{"  ok  pkg/one", "  ok  pkg/two"}, nil)
	if n := strings.Count(d.m.View(), "pkg/one"); n != 1 {
		t.Errorf("output line shows %d times, want once (replace, not append):\n%s", n, d.m.View())
	}
	var out strings.Builder
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&out, "line %02d\n", i)
	}
	d.emit(update(out.String()))
	d.shows("accumulated output", []string{"line 05", "line 12"}, []string{"pkg/one", "line 04"})

	d.emit(agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: "call_1", ToolName: "bash", EntryID: "e3",
		ToolResult: &agent.ToolResult{Content: []agent.ContentBlock{{Type: "text", Text: "PASS\nall 12 tests"}},
			Details: map[string]any{"truncated": true, "bytes": 4096, "entryId": "e3"}}})
	d.shows("call ended", []string{"✓ bash make test", "  PASS", "  all 12 tests", "preview of 4096 bytes; the whole output is in entry e3"},
		[]string{"line 12", "▶ bash"})
	// A last snapshot read before the end brings nothing back.
	d.emit(update(out.String() + "line 13\n"))
	d.shows("late update", []string{"✓ bash make test"}, []string{"line 13"})

	d.emit(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "call_2", ToolName: "read", Args: json.RawMessage(`{"path":"go.mod"}`)},
		agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: "call_2", ToolName: "read", IsError: true,
			ToolResult: &agent.ToolResult{Content: []agent.ContentBlock{{Type: "text", Text: "no such file"}}}})
	d.shows("failed call", []string{"✗ read go.mod", "  no such file"}, nil)
}

// Issue 11: text that streamed for a message that never ended (the prompt
// ended without its message_end) is not left on screen as if stored.
func TestModel_UnfinishedStreamDroppedAtPromptEnd(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(agent.Event{Type: agent.EventAgentStart}, delta("e2", 0, 0, agent.DeltaText, "half an answ"))
	d.shows("streaming", []string{"half an answ"}, nil)
	d.emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusFailed, ErrorMessage: "prompt terminated"})
	d.shows("prompt end", []string{"Prompt failed: prompt terminated"}, []string{"half an answ"})
}
