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

func TestCutAndPreview(t *testing.T) {
	for _, c := range []struct {
		in      string
		n       int
		cut     string
		preview string
	}{
		{"", 5, "", ""},
		{"short", 5, "short", "short"},
		{"longer text", 5, "long…", "long…"},
		{"été à Noël", 4, "été…", "été…"},
		{"a\n  b\tc", 5, "a\n  …", "a b c"},
		{"  x  ", 3, "  …", "x"},
	} {
		if got := Cut(c.in, c.n); got != c.cut {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.cut)
		}
		if got := Preview(c.in, c.n); got != c.preview {
			t.Errorf("Preview(%q, %d) = %q, want %q", c.in, c.n, got, c.preview)
		}
	}
}
