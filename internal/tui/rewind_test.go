package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/testserver"
)

// Issue 42 in the chat: /checkpoints lists the session's checkpoints as
// starter checkpoints prints them; /rewind N puts checkpoint N's files
// back and shows the conversation as it now is, with the rewind that
// undoes it; while a prompt runs /rewind is refused in one line, as
// starter rewind refuses it.
func TestServer_RewindRestoresFilesAndShownConversation(t *testing.T) {
	session := testserver.Session("tui-rewind")
	b := served(t, session, faults(100, `tool:write {"path":"a.txt","content":"two\n"}`, "text:all written"))
	file := filepath.Join(b.Workspace, "a.txt")
	if err := os.WriteFile(file, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, b)
	d.typeLine("change a.txt")
	d.untilScreen("all written")
	d.until("the prompt's end", func() bool { return d.m.prompt == nil })

	d.typeLine("/checkpoints")
	d.untilScreen("changed: modified a.txt")
	d.typeLine("/rewind 1")
	d.until("the conversation read again", func() bool { return !d.m.loading && strings.Contains(d.m.View(), "Back at checkpoint 1") })
	if got, err := os.ReadFile(file); err != nil || string(got) != "one\n" {
		t.Errorf("a.txt after /rewind 1: %q %v, want %q", got, err, "one\n")
	}
	screen := d.m.View()
	for _, want := range []string{"› change a.txt", "(undo: /rewind 3)"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen after the rewind lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "all written") || strings.Contains(screen, "✓ write") {
		t.Errorf("screen after the rewind still shows the rewound turn:\n%s", screen)
	}

	d = newDriver(t, served(t, session, faults(100, "hang:60s")))
	d.typeLine("wait")
	d.until("the prompt", func() bool { return d.m.prompt != nil })
	d.typeLine("/rewind 3")
	d.untilScreen("rewind: session " + session + " is running a prompt")
	if got, _ := os.ReadFile(file); string(got) != "one\n" {
		t.Errorf("a.txt after a refused rewind: %q, want it unchanged", got)
	}
}
