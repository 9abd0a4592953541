package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/rpc"
)

// Issue 42, spec 20.5: rewind (ours: pi's protocol has none) puts a
// checkpoint's files back and moves the conversation there, as starter
// rewind does, and answers with the checkpoint that undoes it; a
// checkpoint the session lacks and a "to" that is no number are one-line
// errors, and the connection keeps serving.
func TestRPC_RewindRestoresFilesAndConversation(t *testing.T) {
	s := server(t)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startProc(t, ws, append([]string{"--session", testserver.Session("e2e-rewind")},
		starterArgs(s, 100, `tool:write {"path":"a.txt","content":"two\n"}`, "text:written")...)...)
	c.prompt("change a.txt")
	if end := c.waitIdle(); end.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v", end)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "two\n" {
		t.Fatalf("a.txt %q after the write", b)
	}
	r := c.request(rpc.Command{Type: rpc.CmdRewind, To: 9})
	if r.Success || !strings.Contains(r.Error, "no checkpoint 9") || strings.Contains(r.Error, "\n") {
		t.Fatalf("rewind to 9: %+v, want a one-line error naming it", r)
	}
	c.sendRaw(`{"id":"x","type":"rewind","to":"one"}`)
	if r := c.response("x"); r.Success || !strings.Contains(r.Error, "to") {
		t.Fatalf(`rewind "to":"one": %+v, want an error naming the field`, r)
	}
	d := decode[rpc.RewindData](t, c.ok(rpc.Command{Type: rpc.CmdRewind, To: 1}))
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "one\n" {
		t.Fatalf("a.txt %q after rewind to 1, want the file before the write", b)
	}
	if msgs := decode[rpc.MessagesData](t, c.ok(rpc.Command{Type: rpc.CmdGetMessages})).Messages; len(msgs) != 1 || msgs[0].Text() != "change a.txt" {
		t.Fatalf("messages after rewind to 1: %+v, want the prompt alone", msgs)
	}
	c.ok(rpc.Command{Type: rpc.CmdRewind, To: d.Undo})
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "two\n" {
		t.Fatalf("a.txt %q after rewind to %d (the undo), want the written file", b, d.Undo)
	}
}
