package live

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

func modelSnap(entry string, attempt int, blocks ...Block) Snapshot {
	return Snapshot{Kind: KindModel, EntryID: entry, Attempt: attempt, Blocks: blocks}
}

func text(index, offset int, tail string) Block {
	return Block{Index: index, Type: agent.BlockText, Offset: offset, Tail: tail}
}

func thinking(index, offset int, tail string) Block {
	return Block{Index: index, Type: agent.BlockThinking, Offset: offset, Tail: tail}
}

// step is one input of a table case: a workflow event delivered, or a
// snapshot read.
type step struct {
	event *agent.Event
	snap  *Snapshot
	want  []string // "entry/attempt/index/type:delta" of every live event
}

func snapStep(s Snapshot, want ...string) step { return step{snap: &s, want: want} }
func eventStep(e agent.Event) step             { return step{event: &e} }

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
				Block{Index: 1, Type: agent.BlockToolCall, ToolCallID: "c1", ToolName: "bash", Tail: `{"cmd":`},
				text(0, 0, "I will run it")),
				"a1/0/0/text_delta:I will run it", `a1/0/1/toolcall_delta(bash c1):{"cmd":`),
			snapStep(modelSnap("a1", 0, text(0, 0, "I will run it"),
				Block{Index: 1, Type: agent.BlockToolCall, ToolCallID: "c1", ToolName: "bash", Tail: `{"cmd":"ls"}`}),
				`a1/0/1/toolcall_delta(bash c1):"ls"}`),
			snapStep(modelSnap("a1", 0, Block{Index: 2, Type: "bogus", Tail: "x"})),
		}},
		{"tool output replaces, until tool_execution_end", []step{
			eventStep(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "c1", ToolName: "bash", Args: []byte(`{"cmd":"ls"}`)}),
			snapStep(Snapshot{Kind: KindTool, EntryID: "r1", ToolCallID: "c1", ToolName: "bash"}),
			snapStep(Snapshot{Kind: KindTool, EntryID: "r1", ToolCallID: "c1", ToolName: "bash", Output: "a\n"}, "tool c1:a\n"),
			snapStep(Snapshot{Kind: KindTool, EntryID: "r1", ToolCallID: "c1", ToolName: "bash", Output: "a\n"}),
			snapStep(Snapshot{Kind: KindTool, EntryID: "r1", ToolCallID: "c1", ToolName: "bash", Output: "a\nb\n"}, "tool c1:a\nb\n"),
			eventStep(agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: "c1", ToolName: "bash"}),
			snapStep(Snapshot{Kind: KindTool, EntryID: "r1", ToolCallID: "c1", ToolName: "bash", Output: "a\nb\nc\n"}),
		}},
		{"unknown kinds and entries without id yield nothing", []step{
			snapStep(Snapshot{Kind: "other", EntryID: "a1"}),
			snapStep(modelSnap("", 0, text(0, 0, "x"))),
			snapStep(Snapshot{Kind: KindTool}),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewCursor()
			for i, st := range c.steps {
				if st.event != nil {
					s.Observe(*st.event)
					continue
				}
				var got []string
				for _, e := range s.Diff(*st.snap) {
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
	s := NewCursor()
	s.Observe(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "c1", ToolName: "bash", Args: []byte(`{"cmd":"ls"}`)})
	evs := s.Diff(Snapshot{Kind: KindTool, EntryID: "r1", ToolCallID: "c1", ToolName: "bash", Output: "out"})
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
		acc := NewModel("a1", 0)
		s := NewCursor()
		var got strings.Builder
		skipAhead := r.IntN(2) == 0
		prevEnd, skipped, pos := 0, false, 0
		for pos < len(final) {
			// Stream a random amount, then take a snapshot.
			n := 1 + r.IntN(MaxSnapshotBytes)
			if skipAhead && r.IntN(4) == 0 {
				n = MaxSnapshotBytes + r.IntN(20000)
			}
			for n > 0 && pos < len(final) {
				k := min(1+r.IntN(40), len(final)-pos)
				for pos+k < len(final) && !utf8.RuneStart(final[pos+k]) {
					k++
				}
				acc.Add(llm.Delta{Type: agent.DeltaText, Delta: final[pos : pos+k]})
				pos += k
				n -= k
			}
			snap := acc.Snapshot()
			b := snap.Blocks[0]
			gap := b.Offset > prevEnd
			skipped = skipped || gap
			evs := s.Diff(snap)
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

// finish completes a streamed message to its message_end: the words after
// the last snapshot come as one more delta per block, so the deltas of the
// message concatenate to message_end's text and tool-call arguments.
func TestLiveStream_FinishCompletesTheMessage(t *testing.T) {
	call := func(id, name, args string) agent.ContentBlock {
		return agent.ContentBlock{Type: agent.BlockToolCall, ToolCall: &agent.ToolCall{ID: id, Name: name, Arguments: []byte(args)}}
	}
	end := func(entry string, blocks ...agent.ContentBlock) agent.Event {
		return agent.Event{Type: agent.EventMessageEnd, EntryID: entry, Message: &agent.Message{
			Role: agent.RoleAssistant, StopReason: agent.StopReasonStop, Content: blocks, Usage: &agent.Usage{Output: 12}}}
	}
	txt := func(s string) agent.ContentBlock { return agent.ContentBlock{Type: agent.BlockText, Text: s} }
	bash := func(offset int, tail string) Block {
		return Block{Index: 2, Type: agent.BlockToolCall, ToolCallID: "c1", ToolName: "bash", Offset: offset, Tail: tail}
	}
	cases := []struct {
		name  string
		snaps []Snapshot
		end   agent.Event
		want  []string
	}{
		{"the last words of the text", []Snapshot{modelSnap("a1", 0, text(0, 0, "Hello, wor"))},
			end("a1", txt("Hello, world.")), []string{"a1/0/0/text_delta:ld."}},
		{"nothing missing, nothing sent", []Snapshot{modelSnap("a1", 0, text(0, 0, "Done."))},
			end("a1", txt("Done.")), nil},
		{"after thinking: text and tool call arguments", []Snapshot{
			modelSnap("a1", 2, thinking(0, 0, "plan"), text(1, 0, "I will"), bash(0, `{"command":`))},
			end("a1", txt("I will run it."), call("c1", "bash", `{"command":"ls"}`)),
			[]string{"a1/2/1/text_delta: run it.", `a1/2/2/toolcall_delta(bash c1):"ls"}`}},
		{"only thinking streamed: the text is the next block", []Snapshot{
			modelSnap("a1", 0, thinking(0, 0, "hmm"))},
			end("a1", txt("Answer.")), []string{"a1/0/1/text_delta:Answer."}},
		{"a tool call never seen comes whole", []Snapshot{modelSnap("a1", 0, text(0, 0, "Running."))},
			end("a1", txt("Running."), call("c9", "read", `{"path":"a"}`)),
			[]string{`a1/0/1/toolcall_delta(read c9):{"path":"a"}`}},
		{"previewed arguments that do not extend what streamed: nothing", []Snapshot{
			modelSnap("a1", 0, text(0, 0, "x"), bash(0, `{"command":"aaaaaaaa`))},
			end("a1", txt("x"), call("c1", "bash", `{"command":"aaa… (900 bytes)"}`)), nil},
		{"a late attach missed the start: nothing (message_end is the text)", []Snapshot{
			modelSnap("a1", 0, text(0, 100, "tail"))},
			end("a1", txt("...")), nil},
		{"bytes skipped between two reads: nothing", []Snapshot{
			modelSnap("a1", 0, text(0, 0, "ab")), modelSnap("a1", 0, text(0, 5, "fg"))},
			end("a1", txt("abcdefgh")), nil},
		{"no delta of the entry: nothing", nil, end("a1", txt("Hello")), nil},
		{"a superseded attempt: nothing", []Snapshot{
			modelSnap("a1", 0, text(0, 0, "partial")), modelSnap("a2", 1, text(0, 0, "retry"))},
			end("a1", txt("partial answer")), nil},
		{"an error answer without the streamed text: nothing", []Snapshot{
			modelSnap("a1", 0, text(0, 0, "partial"))},
			end("a1"), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewCursor()
			for _, snap := range c.snaps {
				s.Diff(snap)
			}
			var got []string
			for _, e := range s.Finish(c.end) {
				if !IsLive(e) || e.EntryID != c.end.EntryID || e.AssistantMessageEvent.OutputTokens != 12 {
					t.Fatalf("not a live event of the entry with message_end's tokens: %+v", e)
				}
				got = append(got, liveString(e))
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("\n got %q\nwant %q", got, c.want)
			}
			s.Observe(c.end)
			if evs := s.Finish(c.end); len(evs) != 0 {
				t.Fatalf("finish after message_end: %+v", evs)
			}
		})
	}
}

// Property: a message streamed as text, thinking and tool-call blocks,
// read through coalesced snapshots that never fall more than the tail
// behind, then finished by its message_end: the text deltas concatenate to
// message_end's text and each call's deltas to its arguments, exactly.
// When reads fall behind (bytes skipped), finish adds nothing, and what
// the client got is still pieces of the real text.
func TestLiveStream_DeltasConcatenateToMessageEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	words := []string{"word ", "ünï ", "∑∂ ", "x", "\n", `"q" `}
	gen := func(n int) string {
		var sb strings.Builder
		for sb.Len() < n {
			sb.WriteString(words[r.IntN(len(words))])
		}
		return sb.String()
	}
	exact, skippedTrials := 0, 0
	defer func() {
		if exact < 100 || skippedTrials < 20 {
			t.Errorf("%d exact trials, %d with skipped bytes: the generator does not cover both", exact, skippedTrials)
		}
	}()
	for trial := range 400 {
		// The message: optional thinking, text, optional tool calls.
		type block struct {
			typ, text, id string
		}
		var blocks []block
		if r.IntN(2) == 0 {
			blocks = append(blocks, block{typ: agent.DeltaThinking, text: gen(1 + r.IntN(3000))})
		}
		blocks = append(blocks, block{typ: agent.DeltaText, text: gen(1 + r.IntN(40000))})
		for i := range r.IntN(3) {
			blocks = append(blocks, block{typ: agent.DeltaToolCall, id: "c" + strconv.Itoa(i),
				text: `{"command":"` + strings.Repeat("y", r.IntN(3000)) + `"}`})
		}
		end := agent.Event{Type: agent.EventMessageEnd, EntryID: "a1",
			Message: &agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse}}
		for _, b := range blocks {
			switch b.typ {
			case agent.DeltaText:
				end.Message.Content = append(end.Message.Content, agent.ContentBlock{Type: agent.BlockText, Text: b.text})
			case agent.DeltaToolCall:
				end.Message.Content = append(end.Message.Content, agent.ContentBlock{Type: agent.BlockToolCall,
					ToolCall: &agent.ToolCall{ID: b.id, Name: "bash", Arguments: []byte(b.text)}})
			}
		}

		acc := NewModel("a1", 0)
		s := NewCursor()
		got := map[string]*strings.Builder{} // by delta type and call id
		take := func(evs []agent.Event) {
			for _, e := range evs {
				a := e.AssistantMessageEvent
				k := a.Type + a.ToolCallID
				if got[k] == nil {
					got[k] = &strings.Builder{}
				}
				got[k].WriteString(a.Delta)
			}
		}
		behind := r.IntN(3) == 0 // reads may fall more than the tail behind
		skipped, sinceRead := false, 0
		prevEnds := map[int]int{}
		for i, b := range blocks {
			for pos := 0; pos < len(b.text); {
				k := min(1+r.IntN(30), len(b.text)-pos)
				for pos+k < len(b.text) && !utf8.RuneStart(b.text[pos+k]) {
					k++
				}
				d := llm.Delta{Type: b.typ, ContentIndex: i, Delta: b.text[pos : pos+k]}
				if b.typ == agent.DeltaToolCall {
					d.ToolCallID, d.ToolName = b.id, "bash"
				}
				acc.Add(d)
				pos += k
				sinceRead += k
				threshold := r.IntN(MaxSnapshotBytes / 2)
				if behind {
					threshold = MaxSnapshotBytes + r.IntN(2*MaxSnapshotBytes)
				}
				if sinceRead >= threshold {
					snap := acc.Snapshot()
					for _, sb := range snap.Blocks {
						if sb.Offset > prevEnds[sb.Index] {
							skipped = true
						}
						prevEnds[sb.Index] = sb.End()
					}
					take(s.Diff(snap))
					sinceRead = 0
				}
			}
		}
		none := len(got) == 0
		fin := s.Finish(end)
		take(fin)
		if none { // no read while it streamed: message_end alone has the text
			if len(fin) != 0 {
				t.Fatalf("trial %d: finish sent %d deltas of a message the client got no delta of", trial, len(fin))
			}
			continue
		}
		if skipped {
			skippedTrials++
			if len(fin) != 0 {
				t.Fatalf("trial %d: finish sent %d deltas though bytes were skipped", trial, len(fin))
			}
			continue
		}
		if g := got[agent.DeltaText]; g == nil || g.String() != end.Message.Text() {
			t.Fatalf("trial %d: text deltas differ from message_end's text (%d bytes)", trial, len(end.Message.Text()))
		}
		for _, b := range blocks {
			if b.typ == agent.DeltaToolCall {
				if g := got[agent.DeltaToolCall+b.id]; g == nil || g.String() != b.text {
					t.Fatalf("trial %d: call %s deltas differ from its arguments", trial, b.id)
				}
			}
		}
		exact++
	}
}
