package client

import (
	"strings"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/line"
)

// MaxSummaryBytes bounds a workflow's static summary (the Temporal Web
// UI's row text, kept in history).
const MaxSummaryBytes = 200

// Summary is a workflow's static summary: prefix and text on one line,
// anything shaped like a key or a bearer token masked, cut on a rune
// boundary to at most MaxSummaryBytes with "…".
func Summary(prefix, text string) string {
	s := prefix + line.Fold(activities.Redact(text))
	if len(s) <= MaxSummaryBytes {
		return s
	}
	const ellipsis = "…"
	return strings.ToValidUTF8(s[:MaxSummaryBytes-len(ellipsis)], "") + ellipsis // a rune cut in two goes
}
