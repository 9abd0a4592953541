package live

import "strings"

// TailDelta is what cur, a later rolling tail of the same output (a tool
// snapshot's Output, which replaces the previous one), adds after prev:
// the part of cur past its longest overlap with the end of prev. When the
// two do not overlap (more output than a tail holds came between them),
// it is all of cur, and what came between is not seen.
func TailDelta(prev, cur string) string {
	if strings.HasPrefix(cur, prev) {
		return cur[len(prev):]
	}
	for k := 1; k < len(prev); k++ {
		if strings.HasPrefix(cur, prev[k:]) {
			return cur[len(prev)-k:]
		}
	}
	return cur
}
