package compaction

// ThresholdPercent is the share of the context window always kept free,
// whatever compaction.reserveTokens says.
const ThresholdPercent = 15

// ShouldCompact is the threshold rule of SPEC 9: compact when
//
//	contextTokens > contextWindow - max(reserveTokens, 15% of contextWindow)
//
// 15% of the window is rounded up (ceil(contextWindow*15/100)), so the free
// room is never below 15%. An unknown window (<= 0) never asks for
// compaction. A reserve at or above the window makes any context compact:
// the formula is applied as written.
func ShouldCompact(contextTokens, contextWindow, reserveTokens int) bool {
	if contextWindow <= 0 {
		return false
	}
	return contextTokens > contextWindow-max(reserveTokens, percentCeil(contextWindow, ThresholdPercent))
}

// percentCeil is ceil(n*p/100) for n >= 0 and 0 <= p <= 100, computed
// without forming n*p so a huge n cannot overflow.
func percentCeil(n, p int) int {
	return n/100*p + (n%100*p+99)/100
}
