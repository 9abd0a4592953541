package settings

import "strings"

// Suggest returns the candidate a misspelt name most likely meant, or "".
// It tries, in order: the same name in another case, the same last segment
// in another group (a key written at the wrong level), and the closest
// spelling within a small edit distance.
func Suggest(name string, candidates []string) string {
	lower := strings.ToLower(name)
	for _, c := range candidates {
		if strings.ToLower(c) == lower {
			return c
		}
	}
	last := lower[strings.LastIndex(lower, ".")+1:]
	match := ""
	for _, c := range candidates {
		if strings.ToLower(c[strings.LastIndex(c, ".")+1:]) == last && strings.Contains(c, ".") {
			if match != "" { // ambiguous (e.g. "enabled")
				match = ""
				break
			}
			match = c
		}
	}
	if match != "" {
		return match
	}
	best, bestDist := "", 0
	for _, c := range candidates {
		d := editDistance(lower, strings.ToLower(c))
		if best == "" || d < bestDist {
			best, bestDist = c, d
		}
	}
	// Allow about one edit per four characters (at least one, at most
	// three), so short names are not "corrected" into unrelated ones.
	if best != "" && bestDist <= max(1, min(3, len(name)/4)) {
		return best
	}
	return ""
}

// editDistance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours ("retyr")
// each cost one.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
