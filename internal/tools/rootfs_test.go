package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Issue 22: a symbolic link to /etc/passwd in the workspace is refused by
// every file tool with tools.confine.
func TestConfine_LinkToEtcPasswdIsRefused(t *testing.T) {
	ws := workspace(t, map[string]string{"sub/ok.txt": "fine\n"})
	if err := os.Symlink("/etc/passwd", filepath.Join(ws, "passwd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(ws, "etc")); err != nil {
		t.Fatal(err)
	}
	o := Options{Workspace: ws, Confine: true}
	for _, tc := range []struct {
		tool string
		args obj
	}{
		{"read", obj{"path": "passwd"}},
		{"read", obj{"path": "etc/passwd"}},
		{"write", obj{"path": "passwd", "content": "x"}},
		{"write", obj{"path": "etc/evil", "content": "x"}},
		{"edit", obj{"path": "passwd", "oldText": "root", "newText": "toor"}},
		{"grep", obj{"pattern": "root", "path": "etc"}},
		{"find", obj{"pattern": "passwd", "path": "etc"}},
		{"ls", obj{"path": "etc"}},
	} {
		res := call(t, o, tc.tool, tc.args)
		if !res.IsError || strings.Contains(res.Content, "root:") || !strings.Contains(res.Content, "outside the workspace") {
			t.Errorf("%s %v: %+v, want refused as outside the workspace", tc.tool, tc.args, res)
		}
	}
	if _, err := os.Stat("/etc/evil"); err == nil {
		t.Fatal("write created /etc/evil")
	}
}

// Issue 22: the confined file system itself refuses a link out, as when
// one is swapped in after the path was checked: reading, listing,
// stating and replacing through it fail and touch nothing outside.
func TestConfine_SwappedInLinkCannotEscape(t *testing.T) {
	ws := workspace(t, nil)
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "secret"), []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(ws, "f")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(ws, "d")); err != nil {
		t.Fatal(err)
	}
	fsys := confine(ws)
	if _, _, err := fsys.OpenRegular(filepath.Join(ws, "f")); !errors.Is(err, errOutside) {
		t.Errorf("open through a link to /etc/passwd: %v", err)
	}
	if _, err := fsys.Stat(filepath.Join(ws, "d", "secret")); !errors.Is(err, errOutside) {
		t.Errorf("stat through a directory link out: %v", err)
	}
	if _, err := fsys.ReadDir(filepath.Join(ws, "d")); !errors.Is(err, errOutside) {
		t.Errorf("list through a directory link out: %v", err)
	}
	if err := fsys.ReplaceFile(filepath.Join(ws, "d", "secret"), []byte("x")); !errors.Is(err, errOutside) {
		t.Errorf("replace through a directory link out: %v", err)
	}
	if err := fsys.MkdirAll(filepath.Join(ws, "d", "new"), 0o755); !errors.Is(err, errOutside) {
		t.Errorf("mkdir through a directory link out: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "secret")); string(b) != "SECRET" {
		t.Fatalf("the file outside changed: %q", b)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Fatalf("something was created outside: %v", entries)
	}
	// Inside the workspace, links that stay inside still work.
	if err := os.WriteFile(filepath.Join(ws, "real.txt"), []byte("in"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.txt", filepath.Join(ws, "alias")); err != nil {
		t.Fatal(err)
	}
	f, _, err := fsys.OpenRegular(filepath.Join(ws, "alias"))
	if err != nil {
		t.Fatalf("a link inside the workspace: %v", err)
	}
	f.Close()
}

// Issue 22: read races a process that keeps swapping a file for a link
// to /etc/passwd between the check and the open; not one read returns
// /etc/passwd.
func TestConfine_ReadRacingALinkSwapNeverEscapes(t *testing.T) {
	ws := workspace(t, map[string]string{"inside.txt": "inside\n"})
	target := filepath.Join(ws, "f")
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		tmp := filepath.Join(ws, "swap")
		for i := 0; !stop.Load(); i++ {
			to := "inside.txt"
			if i%2 == 1 {
				to = "/etc/passwd"
			}
			_ = os.Remove(tmp)
			if os.Symlink(to, tmp) == nil {
				_ = os.Rename(tmp, target)
			}
		}
	}()
	o := Options{Workspace: ws, Confine: true}
	deadline := time.Now().Add(3 * time.Second)
	reads := 0
	for time.Now().Before(deadline) {
		res := call(t, o, "read", obj{"path": "f"})
		if strings.Contains(res.Content, "root:") {
			stop.Store(true)
			<-done
			t.Fatalf("read %d returned /etc/passwd: %.80q", reads, res.Content)
		}
		reads++
	}
	stop.Store(true)
	<-done
	t.Logf("%d reads, none escaped", reads)
}
