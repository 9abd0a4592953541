package live

import "testing"

// A rolling tail turns into the bytes it adds, once each, also when its
// start has rolled past the previous tail's.
func TestTailDelta(t *testing.T) {
	for _, tc := range []struct{ name, prev, cur, want string }{
		{"first", "", "line1\n", "line1\n"},
		{"grown", "line1\n", "line1\nline2\n", "line2\n"},
		{"same", "line1\n", "line1\n", ""},
		{"rolled", "line1\nline2\n", "line2\nline3\n", "line3\n"},
		{"rolled, nothing new", "a\nb\nc\n", "c\n", ""},
		{"no overlap", "old\n", "new\n", "new\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TailDelta(tc.prev, tc.cur); got != tc.want {
				t.Errorf("TailDelta(%q, %q) = %q, want %q", tc.prev, tc.cur, got, tc.want)
			}
		})
	}
}
