package readme

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// maxTrackedFile bounds a tracked file: the largest source or fixture is
// a few hundred KB (the classifier's error corpus, 0.5 MB).
const maxTrackedFile = 4 << 20

// The checkout holds sources, not build outputs: no tracked file is an
// executable binary (ELF, Mach-O, PE) or larger than maxTrackedFile. A
// `go build ./cmd/worker-cluster` run at the root once committed a 66 MB
// binary that every clone then carried.
func TestCheckout_HoldsNoBuildOutputs(t *testing.T) {
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	magics := map[string][]byte{
		"an ELF executable": []byte("\x7fELF"),
		"a Mach-O binary":   {0xcf, 0xfa, 0xed, 0xfe},
		"a PE executable":   []byte("MZ"),
	}
	for _, name := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		path := filepath.Join(root, string(name))
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a link
		}
		if fi.Size() > maxTrackedFile {
			t.Errorf("%s is tracked and %d bytes (over %d): build outputs and large data stay out of the repository", name, fi.Size(), maxTrackedFile)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 4)
		n, _ := io.ReadFull(f, head)
		f.Close()
		for what, magic := range magics {
			if bytes.HasPrefix(head[:n], magic) {
				t.Errorf("%s is tracked and is %s: build outputs stay out of the repository (.gitignore)", name, what)
			}
		}
	}
}
