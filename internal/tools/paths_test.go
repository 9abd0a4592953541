package tools

import (
	"os"
	"path/filepath"
	"testing"
)

func TestConfinement(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	outside := filepath.Join(root, "outside")
	for p, c := range map[string]string{
		"ws/in.txt":           "inside\n",
		"ws/sub/x.txt":        "x\n",
		"outside/secret.txt":  "secret needle\n",
		"outside/dir/any.txt": "a\n",
	} {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"escape":   outside,                               // directory outside
		"escfile":  filepath.Join(outside, "secret.txt"),  // file outside
		"dangling": filepath.Join(outside, "created.txt"), // does not exist yet
		"relesc":   "../outside",                          // relative link out
		"inner":    "sub",                                 // stays inside
		"loop":     "loop",                                // cycle
		"chain":    "inner/../../outside/dir",             // ".." after a link
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	confined := Options{Workspace: ws, Confine: true}
	outsideMsg := func(p string) string { return "path " + p + " is outside the workspace " + ws }

	refused := []struct {
		name, tool string
		args       obj
		shown      string
	}{
		{"dot-dot", "read", obj{"path": "../outside/secret.txt"}, "../outside/secret.txt"},
		{"dot-dot in the middle", "read", obj{"path": "sub/../../outside/secret.txt"}, "sub/../../outside/secret.txt"},
		{"absolute outside", "read", obj{"path": filepath.Join(outside, "secret.txt")}, filepath.Join(outside, "secret.txt")},
		{"absolute root", "ls", obj{"path": "/"}, "/"},
		{"symlinked dir", "read", obj{"path": "escape/secret.txt"}, "escape/secret.txt"},
		{"symlinked file", "read", obj{"path": "escfile"}, "escfile"},
		{"relative symlink", "ls", obj{"path": "relesc"}, "relesc"},
		{"dot-dot after a link", "ls", obj{"path": "chain"}, "chain"},
		{"write through dangling link", "write", obj{"path": "dangling", "content": "pwned"}, "dangling"},
		{"write below symlinked dir", "write", obj{"path": "escape/new/file.txt", "content": "pwned"}, "escape/new/file.txt"},
		{"edit through link", "edit", obj{"path": "escfile", "oldText": "secret", "newText": "public"}, "escfile"},
		{"grep outside", "grep", obj{"pattern": "needle", "path": ".."}, ".."},
		{"find outside", "find", obj{"pattern": "*", "path": "escape"}, "escape"},
		{"at-prefixed", "read", obj{"path": "@../outside/secret.txt"}, "@../outside/secret.txt"},
	}
	for _, tc := range refused {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			mustErr(t, call(t, confined, tc.tool, tc.args), outsideMsg(tc.shown))
		})
	}
	if _, err := os.Lstat(filepath.Join(outside, "created.txt")); err == nil {
		t.Fatal("a write escaped through the dangling link")
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Fatal("a write created a directory outside")
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "secret needle\n" {
		t.Fatalf("edit escaped: %q", got)
	}
	mustErr(t, call(t, confined, "read", obj{"path": "loop"}), "symbolic links")

	allowed := []struct {
		name, tool string
		args       obj
		want       string
	}{
		{"plain", "read", obj{"path": "in.txt"}, "inside"},
		{"dot-dot staying inside", "read", obj{"path": "sub/../in.txt"}, "inside"},
		{"absolute inside", "read", obj{"path": filepath.Join(ws, "in.txt")}, "inside"},
		{"symlink inside", "read", obj{"path": "inner/x.txt"}, "x"},
		{"new nested file", "write", obj{"path": "new/dir/f.txt", "content": "ok"}, "Successfully wrote 2 bytes"},
		{"workspace itself", "ls", obj{}, "in.txt"},
		{"grep skips escaping links", "grep", obj{"pattern": "needle"}, "No matches found"},
	}
	for _, tc := range allowed {
		t.Run("allowed/"+tc.name, func(t *testing.T) {
			r := call(t, confined, tc.tool, tc.args)
			mustOK(t, r)
			mustContain(t, r.Content, tc.want)
		})
	}

	t.Run("Confine=false allows anything", func(t *testing.T) {
		free := Options{Workspace: ws}
		for _, args := range []obj{
			{"path": "../outside/secret.txt"},
			{"path": filepath.Join(outside, "secret.txt")},
			{"path": "escape/secret.txt"},
			{"path": "escfile"},
		} {
			r := call(t, free, "read", args)
			mustOK(t, r)
			mustContain(t, r.Content, "secret needle")
		}
	})
}
