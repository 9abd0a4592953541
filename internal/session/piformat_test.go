package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// The file follows the terminal agent's session format: a version-3
// header, entries {type, id, parentId, timestamp, ...} with a root's
// parentId null, and the model_change, thinking_level_change and
// session_info entry types with its field names.
func TestStore_WritesTheTerminalAgentsFormat(t *testing.T) {
	st := openStore(t)
	if _, err := st.Init("s", Header{Cwd: "/work"}); err != nil {
		t.Fatal(err)
	}
	entries := []Entry{
		msgEntry("u1", "", agent.RoleUser, "hi"),
		{Type: TypeModelChange, ID: "m1", ParentID: "u1", Timestamp: t0, Provider: "anthropic", ModelID: "claude-x"},
		{Type: TypeThinkingLevelChange, ID: "t1", ParentID: "m1", Timestamp: t0, ThinkingLevel: "high"},
		{Type: TypeSessionInfo, ID: "n1", ParentID: "t1", Timestamp: t0, Name: "refactor"},
		{Type: TypeSessionInfo, ID: "n2", ParentID: "n1", Timestamp: t0},
	}
	if _, err := st.Append("s", entries...); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(st.Path("s"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !strings.HasPrefix(lines[0], `{"type":"session","version":3,"id":"s","timestamp":"`) || !strings.HasSuffix(lines[0], `,"cwd":"/work"}`) {
		t.Fatalf("header = %s", lines[0])
	}
	want := []string{
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2025-03-04T05:06:07Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`,
		`{"type":"model_change","id":"m1","parentId":"u1","timestamp":"2025-03-04T05:06:07Z","provider":"anthropic","modelId":"claude-x"}`,
		`{"type":"thinking_level_change","id":"t1","parentId":"m1","timestamp":"2025-03-04T05:06:07Z","thinkingLevel":"high"}`,
		`{"type":"session_info","id":"n1","parentId":"t1","timestamp":"2025-03-04T05:06:07Z","name":"refactor"}`,
		`{"type":"session_info","id":"n2","parentId":"n1","timestamp":"2025-03-04T05:06:07Z","name":""}`,
	}
	if strings.Join(lines[1:], "\n") != strings.Join(want, "\n") {
		t.Fatalf("entries:\n%s\nwant:\n%s", strings.Join(lines[1:], "\n"), strings.Join(want, "\n"))
	}

	sess, err := st.Load("s")
	if err != nil {
		t.Fatal(err)
	}
	if got := sess.LeafID(); got != "n2" {
		t.Fatalf("leaf = %q", got)
	}
	// The setting entries link the branch but are not messages.
	if ctx := sess.Context("n2"); len(ctx) != 1 || ctx[0].Text() != "hi" {
		t.Fatalf("context = %+v", ctx)
	}
	if got := sess.BranchSettings("n2"); got != (BranchSettings{Provider: "anthropic", Model: "claude-x", ThinkingLevel: "high"}) {
		t.Fatalf("branch settings = %+v", got)
	}
	if got := sess.BranchSettings("u1"); got != (BranchSettings{}) {
		t.Fatalf("branch settings before the changes = %+v", got)
	}
	// The last session_info counts, and an empty name clears it.
	if got := sess.Name(); got != "" {
		t.Fatalf("name = %q after a clearing session_info", got)
	}
	sess.Entries = sess.Entries[:len(sess.Entries)-1]
	if got := sess.Name(); got != "refactor" {
		t.Fatalf("name = %q", got)
	}
}

// The new entry types are checked before they reach the file.
func TestAppend_ChecksSettingEntries(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    Entry
		want string
	}{
		{"model_change without model", Entry{Type: TypeModelChange, ID: "m", Provider: "openai"}, `model_change entry "m" needs a provider and a modelId`},
		{"thinking level missing", Entry{Type: TypeThinkingLevelChange, ID: "t"}, `thinking_level_change entry "t" has no thinkingLevel`},
		{"unknown type", Entry{Type: "label", ID: "l"}, `entry "l" has unknown type "label" (want one of message, compaction, model_change, thinking_level_change, session_info, custom)`},
		{"custom without customType", Entry{Type: TypeCustom, ID: "c"}, `custom entry "c" has no customType`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			_, err := st.Append("s", tc.e)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Append = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// A file written before the terminal agent's shapes (version 1, a root
// without parentId, tool calls nested under "toolCall", thinking under
// "text") still loads, and its run context is the same conversation.
func TestLoad_ReadsFilesOfEarlierVersions(t *testing.T) {
	dir := t.TempDir()
	old := `{"type":"session","version":1,"id":"old","timestamp":"2025-03-04T05:06:07Z","cwd":"/w"}
{"type":"message","id":"u","timestamp":"2025-03-04T05:06:07Z","message":{"role":"user","content":[{"type":"text","text":"list"}],"timestamp":1}}
{"type":"message","id":"a","parentId":"u","timestamp":"2025-03-04T05:06:08Z","message":{"role":"assistant","content":[{"type":"thinking","text":"use ls"},{"type":"toolCall","toolCall":{"id":"c1","name":"ls","arguments":{"path":"."}}}],"provider":"scripted","model":"m","stopReason":"toolUse","usage":{"input":3,"output":2,"cacheRead":0,"cacheWrite":0}}}
{"type":"message","id":"r","parentId":"a","timestamp":"2025-03-04T05:06:09Z","message":{"role":"toolResult","content":[{"type":"text","text":"a.txt"}],"toolCallId":"c1","toolName":"ls"}}
{"type":"compaction","id":"k","parentId":"r","timestamp":"2025-03-04T05:06:10Z","summary":"listed files","firstKeptEntryId":"r","tokensBefore":50}
`
	if err := os.WriteFile(filepath.Join(dir, "old.jsonl"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.Load("old")
	if err != nil {
		t.Fatal(err)
	}
	if len(sess.Warnings) > 0 || sess.Header.Version != 1 || sess.Header.Cwd != "/w" {
		t.Fatalf("header %+v, warnings %v", sess.Header, sess.Warnings)
	}
	a, _ := sess.Get("a")
	calls := a.Message.ToolCalls()
	if len(calls) != 1 || calls[0].ID != "c1" || calls[0].Name != "ls" || string(calls[0].Arguments) != `{"path":"."}` ||
		a.Message.Content[0].Type != agent.BlockThinking || a.Message.Content[0].Text != "use ls" {
		t.Fatalf("assistant = %+v", a.Message)
	}
	ctx := sess.Context(sess.LeafID())
	if len(ctx) != 2 || ctx[0].Role != agent.RoleSummary || ctx[0].Text() != "listed files" || ctx[0].TokensBefore != 50 ||
		ctx[1].Role != agent.RoleToolResult || ctx[1].Text() != "a.txt" {
		t.Fatalf("context = %+v", ctx)
	}
	// Appending to the old file keeps it readable: new lines in the new
	// shapes, the old header as it was.
	m := agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{{Type: agent.BlockToolCall, ToolCall: &agent.ToolCall{ID: "c2", Name: "read", Arguments: []byte(`{"path":"a.txt"}`)}}}}
	if _, err := st.Append("old", Entry{Type: TypeMessage, ID: "a2", ParentID: "k", Timestamp: t0, Message: &m}); err != nil {
		t.Fatal(err)
	}
	sess, err = st.Load("old")
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := sess.Get("a2"); !ok || len(e.Message.ToolCalls()) != 1 || e.Message.ToolCalls()[0].Name != "read" || sess.LeafID() != "a2" {
		t.Fatalf("appended entry read back as %+v", e)
	}
}
