package checkpoint

import (
	"bytes"
	"context"
	"encoding/gob"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An edit the file system cannot tell from the file recorded (same size,
// and stamps equal at its granularity) made in the same tick as the last
// Take is still recorded: the stamp is racy, so git looks at the file.
func TestTake_RacyEditWithEqualStamps(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	s, err := Open(filepath.Join(t.TempDir(), "checkpoints", "s1"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(ws, "f")
	os.WriteFile(f, []byte("aaaa"), 0o644)
	time.Sleep(120 * time.Millisecond) // the directory's stamp is not racy
	c1, err := s.Take(ctx, ws, Turn{})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(f, []byte("bbbb"), 0o644)
	// As a file system stamping coarsely sees it: the manifest's stamp of f
	// is the edited file's.
	var m manifest
	b, _ := os.ReadFile(filepath.Join(s.dir, "manifest"))
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&m); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Lstat(f)
	for i, p := range m.Paths {
		if p == "f" {
			m.Stamps[i], _ = stampOf(fi)
			s.save(m)
		}
	}
	if _, changed, ok := s.check(ws); !ok || len(changed) != 1 {
		t.Fatalf("no manifest or no racy path: %v %v", ok, changed)
	}
	c2, err := s.Take(ctx, ws, Turn{})
	if err != nil {
		t.Fatal(err)
	}
	if c2.Tree == c1.Tree {
		t.Fatal("a same-size edit in the Take's tick was not recorded")
	}
}
