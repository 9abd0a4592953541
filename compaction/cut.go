package compaction

import "slices"

// Cut is PlanCut's answer: which items a compaction summarises and which it
// keeps verbatim.
//
// Unless NothingToCompact, the items split into four consecutive parts:
//
//	[leading summary] ToSummarize  SplitTurnPrefix  items[FirstKeptIndex:]
//
// The leading summary (at most one item, index 0) is folded into
// PreviousSummary; ToSummarize goes to SummaryPrompt; SplitTurnPrefix, when
// SplitTurn, goes to TurnPrefixPrompt; the rest is kept. ToSummarize may be
// empty when SplitTurn: the new history summary is then PreviousSummary
// alone (or none).
type Cut struct {
	// NothingToCompact says no cut would summarise anything: everything
	// after a leading summary fits in keepRecentTokens, or there is no
	// valid cut point. FirstKeptIndex is then 0 and the other lists empty.
	NothingToCompact bool `json:"nothingToCompact"`
	// FirstKeptIndex is the index of the first item kept verbatim. It is
	// always a user or assistant item, never a tool result.
	FirstKeptIndex int `json:"firstKeptIndex"`
	// FirstKeptID is items[FirstKeptIndex].ID ("" when there are no items).
	FirstKeptID string `json:"firstKeptId"`
	// PreviousSummary is the text of a leading RoleSummary item. It is
	// merged into the new summary, never kept as an item.
	PreviousSummary string `json:"previousSummary,omitempty"`
	// ToSummarize is the older part, summarised by SummaryPrompt.
	ToSummarize []Item `json:"toSummarize,omitempty"`
	// SplitTurn says the cut falls inside a turn: the first kept item is an
	// assistant message whose turn's user message is before the cut.
	SplitTurn bool `json:"splitTurn"`
	// SplitTurnPrefix is the part of that turn before the cut, starting
	// with its user message; it is summarised separately.
	SplitTurnPrefix []Item `json:"splitTurnPrefix,omitempty"`
}

// PlanCut chooses the cut point of a compaction. It walks back from the
// newest item adding EstimateItem until keepRecentTokens is reached, then
// cuts at the nearest valid point at or after that item (keeping about
// keepRecentTokens, never much more); if there is none, at the nearest valid
// point before it.
//
// A valid cut point is a user or assistant item that no later tool result
// answers a call from before: a tool result is never the first kept item,
// and an assistant tool call is never separated from its results, even when
// results arrive out of order. A leading RoleSummary item (index 0) is never
// kept; its text becomes Cut.PreviousSummary. The parts are clipped:
// appending to one never overwrites the items after it.
func PlanCut(items []Item, keepRecentTokens int) Cut {
	start := 0
	var previous string
	if len(items) > 0 && items[0].Role == RoleSummary {
		start, previous = 1, items[0].Text
	}
	nothing := Cut{NothingToCompact: true, PreviousSummary: previous}
	if len(items) > 0 {
		nothing.FirstKeptID = items[0].ID
	}

	// The newest item at which the kept tail reaches keepRecentTokens.
	reached, kept := -1, 0
	for i := len(items) - 1; i >= start; i-- {
		kept += EstimateItem(items[i])
		if kept >= keepRecentTokens {
			reached = i
			break
		}
	}
	if reached < 0 {
		return nothing
	}

	valid := validCutPoints(items, start)
	cut := -1
	for c := reached; c < len(items) && cut < 0; c++ {
		if valid[c] {
			cut = c
		}
	}
	for c := reached - 1; c > start && cut < 0; c-- {
		if valid[c] {
			cut = c
		}
	}
	if cut <= start {
		return nothing
	}

	out := Cut{
		FirstKeptIndex:  cut,
		FirstKeptID:     items[cut].ID,
		PreviousSummary: previous,
	}
	turnStart := -1
	if items[cut].Role == RoleAssistant {
		for t := cut - 1; t >= start; t-- {
			if items[t].Role == RoleUser {
				turnStart = t
				break
			}
		}
	}
	if turnStart < 0 {
		out.ToSummarize = slices.Clip(items[start:cut])
		return out
	}
	out.SplitTurn = true
	out.ToSummarize = slices.Clip(items[start:turnStart])
	out.SplitTurnPrefix = slices.Clip(items[turnStart:cut])
	return out
}

// validCutPoints marks, for each index, whether the kept part may start
// there: a user or assistant item at or after start such that every tool
// result from it onwards answers a call made at or after it.
func validCutPoints(items []Item, start int) []bool {
	// callAt[r] is the index of the assistant item whose call the tool
	// result at r answers, or len(items) when there is none.
	callAt := make([]int, len(items))
	lastCall := map[string]int{}
	for i, it := range items {
		callAt[i] = len(items)
		switch it.Role {
		case RoleAssistant:
			for _, tc := range it.ToolCalls {
				if tc.ID != "" {
					lastCall[tc.ID] = i
				}
			}
		case RoleToolResult:
			if c, ok := lastCall[it.ToolCallID]; ok && it.ToolCallID != "" {
				callAt[i] = c
			}
		}
	}
	valid := make([]bool, len(items))
	earliestCall := len(items) // min callAt over the suffix from i
	for i := len(items) - 1; i >= start; i-- {
		earliestCall = min(earliestCall, callAt[i])
		role := items[i].Role
		valid[i] = (role == RoleUser || role == RoleAssistant) && earliestCall >= i
	}
	return valid
}
