package cli

import (
	"bytes"
	"os"
	"testing"
)

func TestPrinter_DevNullIsNotATerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, out := range map[string]interface{ Write([]byte) (int, error) }{
		os.DevNull: null, "a pipe": w, "a buffer": &bytes.Buffer{},
	} {
		if p := newPrinter(out, false, "s"); !p.noCountdown {
			t.Errorf("printer on %s draws a countdown: it took it for a terminal", name)
		}
	}
}
