package control

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

func modelSnap(entry string, attempt int, blocks ...activities.SnapshotBlock) activities.StreamSnapshot {
	return activities.StreamSnapshot{Kind: activities.SnapshotModel, EntryID: entry, Attempt: attempt, Blocks: blocks}
}

func text(index, offset int, tail string) activities.SnapshotBlock {
	return activities.SnapshotBlock{Index: index, Type: activities.BlockText, Offset: offset, Tail: tail}
}

func thinking(index, offset int, tail string) activities.SnapshotBlock {
	return activities.SnapshotBlock{Index: index, Type: activities.BlockThinking, Offset: offset, Tail: tail}
}

// step is one input of a table case: a workflow event delivered, or a
// snapshot read.
type step struct {
	event *agent.Event
	snap  *activities.StreamSnapshot
	want  []string // "entry/attempt/index/type:delta" of every live event
}

func snapStep(s activities.StreamSnapshot, want ...string) step { return step{snap: &s, want: want} }
func eventStep(e agent.Event) step                              { return step{event: &e} }

func liveString(e agent.Event) string {
	if e.Type == agent.EventToolExecutionUpdate {
		return "tool " + e.ToolCallID + ":" + e.PartialResult.Content[0].Text
	}
	a := e.AssistantMessageEvent
	typ := a.Type
	if a.ToolCallID != "" || a.ToolName != "" {
		typ += "(" + a.ToolName + " " + a.ToolCallID + ")"
	}
	return e.EntryID + "/" + strconv.Itoa(a.Attempt) + "/" + strconv.Itoa(a.ContentIndex) + "/" + typ + ":" + a.Delta
}

func TestLiveStream_Rules(t *testing.T) {
	okAnswer := &agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonStop}
	errAnswer := &agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonError}
	cases := []struct {
		name  string
		steps []step
	}{
		{"deltas from successive snapshots", []step{
			snapStep(modelSnap("a1", 0, text(0, 0, "Hel")), "a1/0/0/text_delta:Hel"),
			snapStep(modelSnap("a1", 0, text(0, 0, "Hello, wo")), "a1/0/0/text_delta:lo, wo"),
			snapStep(modelSnap("a1", 0, text(0, 0, "Hello, wo"))), // unchanged: nothing
			snapStep(modelSnap("a1", 0, text(0, 0, "Hello, world")), "a1/0/0/text_delta:rld"),
		}},
		{"late attach gets the text so far as one delta", []step{
			snapStep(modelSnap("a1", 0, thinking(0, 0, "plan it"), text(1, 0, "The answer so far")),
				"a1/0/0/thinking_delta:plan it", "a1/0/1/text_delta:The answer so far"),
			snapStep(modelSnap("a1", 0, thinking(0, 0, "plan it"), text(1, 0, "The answer so far, and more")),
				"a1/0/1/text_delta:, and more"),
		}},
		{"late attach to a long block gets its tail", []step{
			snapStep(modelSnap("a1", 0, text(0, 5000, "tail of it")), "a1/0/0/text_delta:tail of it"),
			snapStep(modelSnap("a1", 0, text(0, 5003, "l of it, then")), "a1/0/0/text_delta:, then"),
		}},
		{"offset past what the client has: what is known, once", []step{
			snapStep(modelSnap("a1", 0, text(0, 0, "abc")), "a1/0/0/text_delta:abc"),
			snapStep(modelSnap("a1", 0, text(0, 10, "klmn")), "a1/0/0/text_delta:klmn"),
			snapStep(modelSnap("a1", 0, text(0, 12, "mnop")), "a1/0/0/text_delta:op"),
			snapStep(modelSnap("a1", 0, text(0, 11, "lmnop"))), // older view: nothing twice
		}},
		{"a later attempt supersedes, from its own beginning", []step{
			snapStep(modelSnap("a1", 0, text(0, 0, "first try")), "a1/0/0/text_delta:first try"),
			snapStep(modelSnap("a1", 1, text(0, 0, "fir")), "a1/1/0/text_delta:fir"),
			snapStep(modelSnap("a1", 0, text(0, 0, "first try, stale"))), // stale attempt
			snapStep(modelSnap("a1", 1, text(0, 0, "first again")), "a1/1/0/text_delta:st again"),
		}},
		{"a retry under a new entry supersedes the failed one", []step{
			snapStep(modelSnap("a1", 0, text(0, 0, "partial")), "a1/0/0/text_delta:partial"),
			eventStep(agent.Event{Type: agent.EventMessageEnd, EntryID: "a1", Message: errAnswer}),
			snapStep(modelSnap("a2", 1, text(0, 0, "retry")), "a2/1/0/text_delta:retry"),
			snapStep(modelSnap("a3", 0, text(0, 0, "late snapshot of an older attempt"))),
		}},
		{"message_end wins", []step{
			snapStep(modelSnap("a1", 0, text(0, 0, "abc")), "a1/0/0/text_delta:abc"),
			eventStep(agent.Event{Type: agent.EventMessageEnd, EntryID: "a1", Message: okAnswer}),
			snapStep(modelSnap("a1", 0, text(0, 0, "abcdef"))),
			snapStep(modelSnap("a1", 5, text(0, 0, "even a later attempt"))),
		}},
		{"the next turn counts attempts again", []step{
			snapStep(modelSnap("a1", 2, text(0, 0, "x")), "a1/2/0/text_delta:x"),
			eventStep(agent.Event{Type: agent.EventMessageEnd, EntryID: "a1", Message: okAnswer}),
			eventStep(agent.Event{Type: agent.EventTurnStart, Turn: 2}),
			snapStep(modelSnap("a4", 0, text(0, 0, "y")), "a4/0/0/text_delta:y"),
		}},
		{"tool call arguments and blocks in index order", []step{
			snapStep(modelSnap("a1", 0,
				activities.SnapshotBlock{Index: 1, Type: activities.BlockToolCall, ToolCallID: "c1", ToolName: "bash", Tail: `{"cmd":`},
				text(0, 0, "I will run it")),
				"a1/0/0/text_delta:I will run it", `a1/0/1/toolcall_delta(bash c1):{"cmd":`),
			snapStep(modelSnap("a1", 0, text(0, 0, "I will run it"),
				activities.SnapshotBlock{Index: 1, Type: activities.BlockToolCall, ToolCallID: "c1", ToolName: "bash", Tail: `{"cmd":"ls"}`}),
				`a1/0/1/toolcall_delta(bash c1):"ls"}`),
			snapStep(modelSnap("a1", 0, activities.SnapshotBlock{Index: 2, Type: "bogus", Tail: "x"})),
		}},
		{"tool output replaces, until tool_execution_end", []step{
			eventStep(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "c1", ToolName: "bash", Args: []byte(`{"cmd":"ls"}`)}),
			snapStep(activities.StreamSnapshot{Kind: activities.SnapshotTool, EntryID: "r1", ToolCallID: "c1", ToolName: "bash"}),
			snapStep(activities.StreamSnapshot{Kind: activities.SnapshotTool, EntryID: "r1", ToolCallID: "c1", ToolName: "bash", Output: "a\n"}, "tool c1:a\n"),
			snapStep(activities.StreamSnapshot{Kind: activities.SnapshotTool, EntryID: "r1", ToolCallID: "c1", ToolName: "bash", Output: "a\n"}),
			snapStep(activities.StreamSnapshot{Kind: activities.SnapshotTool, EntryID: "r1", ToolCallID: "c1", ToolName: "bash", Output: "a\nb\n"}, "tool c1:a\nb\n"),
			eventStep(agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: "c1", ToolName: "bash"}),
			snapStep(activities.StreamSnapshot{Kind: activities.SnapshotTool, EntryID: "r1", ToolCallID: "c1", ToolName: "bash", Output: "a\nb\nc\n"}),
		}},
		{"unknown kinds and entries without id yield nothing", []step{
			snapStep(activities.StreamSnapshot{Kind: "other", EntryID: "a1"}),
			snapStep(modelSnap("", 0, text(0, 0, "x"))),
			snapStep(activities.StreamSnapshot{Kind: activities.SnapshotTool}),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newLiveStream()
			for i, st := range c.steps {
				if st.event != nil {
					s.observe(*st.event)
					continue
				}
				var got []string
				for _, e := range s.diff(*st.snap) {
					if !IsLive(e) || e.EntryID != st.snap.EntryID {
						t.Fatalf("step %d: not a live event of the entry: %+v", i, e)
					}
					got = append(got, liveString(e))
				}
				if strings.Join(got, "|") != strings.Join(st.want, "|") {
					t.Fatalf("step %d:\n got %q\nwant %q", i, got, st.want)
				}
			}
		})
	}
}

func TestLiveStream_ToolUpdateShape(t *testing.T) {
	s := newLiveStream()
	s.observe(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "c1", ToolName: "bash", Args: []byte(`{"cmd":"ls"}`)})
	evs := s.diff(activities.StreamSnapshot{Kind: activities.SnapshotTool, EntryID: "r1", ToolCallID: "c1", ToolName: "bash", Output: "out"})
	if len(evs) != 1 {
		t.Fatalf("events %+v", evs)
	}
	e := evs[0]
	if e.Type != agent.EventToolExecutionUpdate || e.ToolName != "bash" || string(e.Args) != `{"cmd":"ls"}` ||
		len(e.PartialResult.Content) != 1 || e.PartialResult.Content[0].Type != "text" || e.PartialResult.Content[0].Text != "out" {
		t.Fatalf("update %+v", e)
	}
	b, err := e.MarshalJSON()
	if err != nil || !strings.Contains(string(b), `"partialResult":{"content":[{"type":"text","text":"out"}]}`) {
		t.Fatalf("json %s %v", b, err)
	}
}

// Property: whenever every snapshot's tail overlaps what the previous one
// ended at (the follower polled often enough), the deltas add up to the
// final text exactly. When snapshots skip ahead, every delta is the text
// right before the snapshot's end, starting at or after the previous end:
// nothing is repeated, and nothing is lost but the skipped bytes.
func TestLiveStream_CoalescedSnapshotsLoseAndRepeatNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		var sb strings.Builder
		for sb.Len() < 1000+r.IntN(60000) {
			sb.WriteString([]string{"word ", "ünï ", "∑∂ ", "x", "\n"}[r.IntN(5)])
		}
		final := sb.String()
		acc := activities.NewModelStream("a1", 0)
		s := newLiveStream()
		var got strings.Builder
		skipAhead := r.IntN(2) == 0
		prevEnd, skipped, pos := 0, false, 0
		for pos < len(final) {
			// Stream a random amount, then take a snapshot.
			n := 1 + r.IntN(activities.MaxSnapshotBytes)
			if skipAhead && r.IntN(4) == 0 {
				n = activities.MaxSnapshotBytes + r.IntN(20000)
			}
			for n > 0 && pos < len(final) {
				k := min(1+r.IntN(40), len(final)-pos)
				for pos+k < len(final) && !utf8.RuneStart(final[pos+k]) {
					k++
				}
				acc.Add(llm.Delta{Type: llm.DeltaText, Delta: final[pos : pos+k]})
				pos += k
				n -= k
			}
			snap := acc.Snapshot()
			b := snap.Blocks[0]
			gap := b.Offset > prevEnd
			skipped = skipped || gap
			evs := s.diff(snap)
			if len(evs) != 1 {
				t.Fatalf("trial %d: %d events for a grown block", trial, len(evs))
			}
			d := evs[0].AssistantMessageEvent.Delta
			start := b.End() - len(d)
			switch {
			case final[start:b.End()] != d:
				t.Fatalf("trial %d: delta is not the text before the snapshot's end", trial)
			case start < prevEnd:
				t.Fatalf("trial %d: delta repeats %d bytes", trial, prevEnd-start)
			case !gap && start != prevEnd:
				t.Fatalf("trial %d: %d bytes lost though the tail overlapped", trial, start-prevEnd)
			case gap && start != b.Offset:
				t.Fatalf("trial %d: after a gap the delta should be the whole tail", trial)
			}
			got.WriteString(d)
			prevEnd = b.End()
		}
		if !skipped && got.String() != final {
			t.Fatalf("trial %d: deltas (%d bytes) differ from the final text (%d bytes)", trial, got.Len(), len(final))
		}
	}
}
