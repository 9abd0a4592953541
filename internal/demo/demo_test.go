package demo

import (
	"os"
	"testing"
)

func TestIsTerminal_DevNullIsNotATerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Fatalf("isTerminal(%s) = true: --keep would default on with stdin from /dev/null", os.DevNull)
	}
}
