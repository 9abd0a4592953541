package rpcserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// frameAll runs events through a framer and returns the lines as JSON
// objects, as a client reads them.
func frameAll(t *testing.T, p Protocol, events ...agent.Event) []map[string]any {
	t.Helper()
	f := newFramer(p)
	var out []map[string]any
	for _, e := range events {
		for _, l := range f.frame(e) {
			b, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}

func delta(entry, typ string, i int, d string, attempt, tokens int, id, name string) agent.Event {
	return agent.Event{Type: agent.EventMessageUpdate, EntryID: entry, AssistantMessageEvent: &agent.AssistantMessageEvent{
		Type: typ, ContentIndex: i, Delta: d, Attempt: attempt, OutputTokens: tokens, ToolCallID: id, ToolName: name}}
}

// ame is a line's assistantMessageEvent.
func ame(l map[string]any) map[string]any {
	m, _ := l["assistantMessageEvent"].(map[string]any)
	return m
}

// Issue 24: pi 1.6's message_update: each content block is framed by its
// *_start and *_end (the end carries the whole block, toolcall_start the
// call's id and toolName), every update carries the usage so far at the
// top level, and no update carries the answer so far.
func TestBlockFramer_FramesEachContentBlock(t *testing.T) {
	start := agent.Event{Type: agent.EventMessageStart, EntryID: "a", Message: &agent.Message{Role: agent.RoleAssistant, Provider: "anthropic", Model: "m"}}
	end := agent.Event{Type: agent.EventMessageEnd, Seq: 7, EntryID: "a", Message: &agent.Message{Role: agent.RoleAssistant}}
	lines := frameAll(t, ProtocolPi16, start,
		delta("a", agent.DeltaThinking, 0, "pl", 0, 1, "", ""),
		delta("a", agent.DeltaThinking, 0, "an", 0, 2, "", ""),
		delta("a", agent.DeltaText, 1, "Listing", 0, 4, "", ""),
		delta("a", agent.DeltaToolCall, 2, `{"comm`, 0, 6, "c1", "bash"),
		delta("a", agent.DeltaToolCall, 2, `and":"ls"}`, 0, 9, "c1", "bash"),
		end)
	if lines[12]["seq"] != 0.0 {
		t.Errorf("toolcall_end before message_end has seq %v, want the seq of the update before it (0)", lines[12]["seq"])
	}
	var kinds []string
	for _, l := range lines {
		k := l["type"].(string)
		if k == agent.EventMessageUpdate {
			k = ame(l)["type"].(string)
			if _, ok := l["message"]; ok {
				t.Errorf("pi 1.6 update %s carries the answer so far: %v", k, l)
			}
			if _, ok := l["usage"].(map[string]any); !ok {
				t.Errorf("update %s has no top-level usage: %v", k, l)
			}
		}
		kinds = append(kinds, k)
	}
	want := []string{"message_start", "start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_end",
		"text_start", "text_delta", "text_end", "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_end", "done", "message_end"}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("lines =\n%v\nwant\n%v", kinds, want)
	}
	if c := ame(lines[5])["content"]; c != "plan" {
		t.Errorf("thinking_end content = %v, want plan", c)
	}
	if c := ame(lines[8])["content"]; c != "Listing" {
		t.Errorf("text_end content = %v, want Listing", c)
	}
	if s := ame(lines[9]); s["id"] != "c1" || s["toolName"] != "bash" || s["contentIndex"] != 2.0 {
		t.Errorf("toolcall_start = %v, want id c1, toolName bash, contentIndex 2", s)
	}
	tc, _ := ame(lines[12])["toolCall"].(map[string]any)
	if tc["type"] != "toolCall" || tc["id"] != "c1" || tc["name"] != "bash" || !reflect.DeepEqual(tc["arguments"], map[string]any{"command": "ls"}) {
		t.Errorf("toolcall_end toolCall = %v", tc)
	}
	if u := lines[11]["usage"].(map[string]any); u["output"] != 9.0 || u["totalTokens"] != 9.0 {
		t.Errorf("usage of the last delta = %v, want output 9", u)
	}
	if d := ame(lines[3]); d["delta"] != "pl" || d["contentIndex"] != 0.0 {
		t.Errorf("thinking_delta = %v", d)
	}
	if s := ame(lines[1]); !reflect.DeepEqual(s, map[string]any{"type": "start", "attempt": 0.0}) || lines[1]["entryId"] != "a" {
		t.Errorf("start = %v, want a bare start of entry a", lines[1])
	}
}

// Issue 24: pi 1.6's start, done and error frame the whole answer: start
// after its message_start, then before its message_end done with the
// stop reason and the final message (a call that ended normally) or
// error with the reason and the message (one that failed or was
// aborted), carrying the final usage and the seq of the workflow event
// before the message_end; pi 0.73 clients get none of them.
func TestBlockFramer_StartDoneAndError(t *testing.T) {
	start := func(id string, seq int64) agent.Event {
		return agent.Event{Type: agent.EventMessageStart, Seq: seq, EntryID: id, Message: &agent.Message{Role: agent.RoleAssistant, Provider: "anthropic", Model: "m"}}
	}
	usage := &agent.Usage{Input: 120, Output: 30, CacheRead: 7, TotalTokens: 157, Cost: agent.UsageCost{Total: 0.01}}
	done := agent.Event{Type: agent.EventMessageEnd, Seq: 5, EntryID: "a", Message: &agent.Message{Role: agent.RoleAssistant,
		StopReason: agent.StopReasonToolUse, Usage: usage, Content: []agent.ContentBlock{{Type: agent.BlockText, Text: "Hi"}}}}
	failed := agent.Event{Type: agent.EventMessageEnd, Seq: 9, EntryID: "b", Message: &agent.Message{Role: agent.RoleAssistant,
		StopReason: agent.StopReasonError, ErrorMessage: "503 Service Unavailable"}}
	aborted := agent.Event{Type: agent.EventMessageEnd, Seq: 12, EntryID: "c", Message: &agent.Message{Role: agent.RoleAssistant,
		StopReason: agent.StopReasonAborted}}
	retry := agent.Event{Type: agent.EventAutoRetryStart, Seq: 8}
	hi := delta("a", agent.DeltaText, 0, "Hi", 1, 1, "", "")
	hi.Seq = 3 // a live event carries the seq of the event before it
	lines := frameAll(t, ProtocolPi16,
		start("a", 3), hi, agent.Event{Type: agent.EventToolExecutionStart, Seq: 4}, done,
		start("b", 7), retry, failed,
		start("c", 11), aborted)
	var got []string
	for _, l := range lines {
		k := l["type"].(string)
		if e := ame(l); e != nil {
			k = e["type"].(string)
		}
		got = append(got, fmt.Sprintf("%s@%v", k, l["seq"]))
	}
	want := []string{"message_start@3", "start@3", "text_start@3", "text_delta@3", "tool_execution_start@4", "text_end@3", "done@4", "message_end@5",
		"message_start@7", "start@7", "auto_retry_start@8", "error@8", "message_end@9",
		"message_start@11", "start@11", "error@11", "message_end@12"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("lines =\n%v\nwant\n%v", got, want)
	}
	d := ame(lines[6])
	m, _ := d["message"].(map[string]any)
	if d["reason"] != "toolUse" || d["attempt"] != 1.0 || m == nil || m["stopReason"] != "toolUse" || d["error"] != nil {
		t.Errorf("done = %v, want reason toolUse, attempt 1 and the final message", d)
	}
	if u := lines[6]["usage"].(map[string]any); u["input"] != 120.0 || u["cacheRead"] != 7.0 || u["totalTokens"] != 157.0 {
		t.Errorf("done usage = %v, want the final message's", u)
	}
	e := ame(lines[11])
	em, _ := e["error"].(map[string]any)
	if e["reason"] != "error" || em == nil || em["errorMessage"] != "503 Service Unavailable" || e["message"] != nil {
		t.Errorf("error = %v, want reason error and the failed message as error", e)
	}
	if a := ame(lines[15]); a["reason"] != "aborted" {
		t.Errorf("error of the aborted call = %v, want reason aborted", a)
	}
	for _, l := range frameAll(t, ProtocolPi073, start("a", 3), delta("a", agent.DeltaText, 0, "Hi", 0, 1, "", ""), done) {
		if e := ame(l); e != nil && (e["type"] == "start" || e["type"] == "done") {
			t.Errorf("a pi 0.73 client got %v", l)
		}
	}
}

// Issue 24: a client that speaks pi 0.73 (starter rpc --protocol 0.73)
// gets the same frames plus the answer so far on every update.
func TestBlockFramer_Pi073GetsTheAnswerSoFar(t *testing.T) {
	lines := frameAll(t, ProtocolPi073,
		agent.Event{Type: agent.EventMessageStart, EntryID: "a", Message: &agent.Message{Role: agent.RoleAssistant, Provider: "anthropic", Model: "m"}},
		delta("a", agent.DeltaText, 0, "Hel", 0, 1, "", ""),
		delta("a", agent.DeltaText, 0, "lo", 0, 2, "", ""))
	last := lines[len(lines)-1]
	m, _ := last["message"].(map[string]any)
	if m == nil {
		t.Fatalf("pi 0.73 update without message: %v", last)
	}
	content, _ := m["content"].([]any)
	if len(content) != 1 || content[0].(map[string]any)["text"] != "Hello" || m["model"] != "m" || m["api"] != "anthropic-messages" {
		t.Errorf("answer so far = %v, want Hello from anthropic/m", m)
	}
	if ame(lines[1])["type"] != "text_start" {
		t.Errorf("second line = %v, want text_start", lines[1])
	}
}

// A later attempt of the same answer (a retry) closes the earlier
// attempt's open block and starts its own blocks from scratch.
func TestBlockFramer_LaterAttemptStartsOver(t *testing.T) {
	lines := frameAll(t, ProtocolPi16,
		delta("a", agent.DeltaText, 0, "bro", 0, 0, "", ""),
		delta("a", agent.DeltaText, 0, "Whole", 1, 0, "", ""),
		agent.Event{Type: agent.EventMessageEnd, EntryID: "a"})
	var got []string
	for _, l := range lines {
		if e := ame(l); e != nil {
			got = append(got, e["type"].(string)+":"+strings.TrimSpace(func() string { s, _ := e["content"].(string); return s }()))
		} else {
			got = append(got, l["type"].(string))
		}
	}
	want := []string{"text_start:", "text_delta:", "text_end:bro", "text_start:", "text_delta:", "text_end:Whole", "message_end"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lines = %v, want %v", got, want)
	}
}

func TestParseProtocol(t *testing.T) {
	for in, want := range map[string]Protocol{"": ProtocolPi16, "1.6": ProtocolPi16, "0.73": ProtocolPi073} {
		if p, err := ParseProtocol(in); err != nil || p != want {
			t.Errorf("ParseProtocol(%q) = %q, %v; want %q", in, p, err, want)
		}
	}
	if _, err := ParseProtocol("2"); err == nil || !strings.Contains(err.Error(), `invalid protocol "2"`) {
		t.Errorf("ParseProtocol(2) error = %v", err)
	}
}

// Issue 24: the streaming usage carries what the provider reported so
// far (input, cache reads and writes, output) and its cost, not only the
// output count; a later delta without a report keeps it.
func TestBlockFramer_UsageSoFar(t *testing.T) {
	first := delta("a", agent.DeltaText, 0, "Hel", 0, 1, "", "")
	first.AssistantMessageEvent.Usage = &agent.Usage{Input: 1000, Output: 1, CacheRead: 2000, CacheWrite: 400, TotalTokens: 3401,
		Cost: agent.UsageCost{Input: 0.003, CacheRead: 0.0006, CacheWrite: 0.0015, Total: 0.0051}}
	lines := frameAll(t, ProtocolPi16, first, delta("a", agent.DeltaText, 0, "lo", 0, 7, "", ""))
	u := lines[1]["usage"].(map[string]any)
	cost, _ := u["cost"].(map[string]any)
	if u["input"] != 1000.0 || u["cacheRead"] != 2000.0 || u["cacheWrite"] != 400.0 || u["output"] != 1.0 || cost["total"] != 0.0051 {
		t.Errorf("usage of the first delta = %v, want the provider's report and its cost", u)
	}
	if u := lines[2]["usage"].(map[string]any); u["input"] != 1000.0 || u["output"] != 7.0 || u["totalTokens"] != 3407.0 {
		t.Errorf("usage of the next delta = %v, want the report kept and output 7", u)
	}
}
