package term

import (
	"os"
	"path/filepath"
	"testing"
)

func TestIsTerminal_DevNullIsNotATerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice == 0 {
		t.Logf("%s is not a character device here", os.DevNull)
	}
	if IsTerminal(f) {
		t.Fatalf("IsTerminal(%s) = true, want false", os.DevNull)
	}
}

func TestIsTerminal_PipeIsNotATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(r) || IsTerminal(w) {
		t.Fatal("IsTerminal of a pipe = true, want false")
	}
}

func TestIsTerminal_RegularFileAndNilAreNotTerminals(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Fatal("IsTerminal of a regular file = true")
	}
	if IsTerminal(nil) {
		t.Fatal("IsTerminal(nil) = true")
	}
	f.Close()
	if IsTerminal(f) {
		t.Fatal("IsTerminal of a closed file = true")
	}
}
