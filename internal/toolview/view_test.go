package toolview

import (
	"fmt"
	"strings"
	"testing"
)

func texts(ls []Line) string {
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "%d|%s\n", l.Kind, l.Text)
	}
	return b.String()
}

// An edit shows its diff whole, + and - lines marked for colour (the
// 160-character preview stopped before the + lines).
func TestCollapsed_EditShowsItsDiff(t *testing.T) {
	text := "Successfully replaced text in greet.sh.\n\n 1 #!/bin/sh\n-2 echo \"Helo, $1!\"\n+2 echo \"Hello, $1!\"\n 3 exit 0\n"
	got := texts(Collapsed("edit", text, false))
	want := "0|Successfully replaced text in greet.sh.\n0| 1 #!/bin/sh\n2|-2 echo \"Helo, $1!\"\n1|+2 echo \"Hello, $1!\"\n0| 3 exit 0\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// A failing command shows its last lines and its exit code, not the start
// of its output.
func TestCollapsed_CommandShowsTailAndExit(t *testing.T) {
	var out []string
	for i := 1; i <= 30; i++ {
		out = append(out, fmt.Sprintf("line %d", i))
	}
	out = append(out, "FAIL\texample.com/m\t0.01s")
	text := strings.Join(out, "\n") + "\n\nCommand exited with code 1"
	ls := Collapsed("bash", text, true)
	if len(ls) != CommandTailLines+2 {
		t.Fatalf("%d lines, want %d:\n%s", len(ls), CommandTailLines+2, texts(ls))
	}
	if ls[0].Kind != Elided || ls[0].Text != "… 21 earlier lines" {
		t.Fatalf("first line %+v, want the elision note", ls[0])
	}
	if ls[len(ls)-2].Text != "FAIL\texample.com/m\t0.01s" {
		t.Fatalf("last output line %+v, want the FAIL line", ls[len(ls)-2])
	}
	if last := ls[len(ls)-1]; last.Kind != Status || last.Text != "Command exited with code 1" {
		t.Fatalf("status %+v", last)
	}
	if full := Full("bash", text, true); len(full) != 32 || full[0].Text != "line 1" {
		t.Fatalf("full view has %d lines starting %+v, want 32 from line 1", len(full), full[0])
	}
	ok := Collapsed("bash", "PASS\n", false)
	if texts(ok) != "0|PASS\n3|exit 0\n" {
		t.Fatalf("a successful command: %q", texts(ok))
	}
}

// Any other result, an error message above all, shows whole when short.
func TestCollapsed_MessageShownWhole(t *testing.T) {
	msg := "Tool bash was interrupted (its worker stopped): the command may or may not have completed. Check its effects before running it again."
	ls := Collapsed("bash", msg, true)
	if len(ls) != 1 || ls[0].Text != msg {
		t.Fatalf("got %q", texts(ls))
	}
	long := strings.Repeat("x\n", 20)
	ls = Collapsed("write", long, true)
	if len(ls) != TextLines+1 || ls[TextLines].Text != "… 12 more lines" {
		t.Fatalf("an error of 20 lines collapsed to %q", texts(ls))
	}
	if ls = Collapsed("read", long, false); texts(ls) != "0|x\n4|… 19 more lines\n" {
		t.Fatalf("a read of 20 lines collapsed to %q", texts(ls))
	}
}
