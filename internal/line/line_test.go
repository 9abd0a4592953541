package line

import "testing"

func TestFirstAndFold(t *testing.T) {
	for _, c := range []struct{ in, first, fold string }{
		{"", "", ""},
		{"one line", "one line", "one line"},
		{"headline\ndetail\nmore", "headline", "headline detail more"},
		{"  spaced \t out \r\n next ", "  spaced \t out \r", "spaced out next"},
	} {
		if got := First(c.in); got != c.first {
			t.Errorf("First(%q) = %q, want %q", c.in, got, c.first)
		}
		if got := Fold(c.in); got != c.fold {
			t.Errorf("Fold(%q) = %q, want %q", c.in, got, c.fold)
		}
	}
}
