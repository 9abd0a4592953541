package compaction

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// itemsFromBytes turns fuzz input into a conversation: each byte pair is
// one item, the first byte choosing its role and tool-call links, the
// second its size. Tool results mostly answer the newest open call and
// sometimes an older one, an unknown id or none, so well-formed and odd
// orderings are both explored.
func itemsFromBytes(data []byte) []Item {
	var items []Item
	var calls []string
	for i := 0; i+1 < len(data); i += 2 {
		kind, size := data[i], int(data[i+1])
		id := fmt.Sprintf("e%d", i/2)
		it := Item{ID: id, Tokens: size}
		switch kind % 8 {
		case 0, 1:
			it.Role = RoleUser
		case 2:
			it.Role = RoleAssistant
		case 3, 4:
			it.Role = RoleAssistant
			for n := range int(kind>>3)%3 + 1 {
				c := fmt.Sprintf("c%d_%d", i/2, n)
				calls = append(calls, c)
				it.ToolCalls = append(it.ToolCalls, ToolCallRef{ID: c, Name: "read", Arguments: json.RawMessage(`{"path":"f"}`)})
			}
		case 5, 6:
			it.Role = RoleToolResult
			switch sel := int(kind >> 3); {
			case len(calls) == 0 || sel == 31:
				it.ToolCallID = "unknown"
			case sel%4 == 0:
				it.ToolCallID = calls[sel%len(calls)]
			default:
				it.ToolCallID = calls[len(calls)-1]
			}
		case 7:
			it.Role = RoleSummary
			it.Text = "summary " + id
		}
		items = append(items, it)
	}
	return items
}

// FuzzPlanCut checks PlanCut's invariants on generated conversations: the
// first kept item is a user or assistant item (never a tool result), the
// index is in range, the leading summary, the summarised part, the split
// turn prefix and the kept part make up all items in order, and no kept
// tool result answers a call made before the cut.
func FuzzPlanCut(f *testing.F) {
	// The seed corpus is in testdata/fuzz/FuzzPlanCut.
	f.Fuzz(func(t *testing.T, data []byte, keep uint16) {
		// Long conversations add nothing the rules do not show on short
		// ones and make the quadratic oracle below slow.
		if len(data) > 512 {
			data = data[:512]
		}
		items := itemsFromBytes(data)
		c := PlanCut(items, int(keep))
		checkCutInvariants(t, items, c)
		if c.NothingToCompact {
			return
		}
		// Never keep more than needed: cutting at any later valid point
		// would keep less than the budget.
		answers := answeredCalls(items)
		for j := c.FirstKeptIndex + 1; j < len(items); j++ {
			if cuttableAt(items, answers, j) {
				if after := EstimateContext(items[j:], nil); after >= int(keep) {
					t.Fatalf("cut at %d keeps %d tokens, but the valid cut at %d keeps %d >= budget %d",
						c.FirstKeptIndex, EstimateContext(items[c.FirstKeptIndex:], nil), j, after, keep)
				}
			}
		}
	})
}

// answeredCalls maps each tool result's index to the index of the call it
// answers: the newest assistant item before it with a call of its id.
func answeredCalls(items []Item) map[int]int {
	out := map[int]int{}
	for k, it := range items {
		if it.Role != RoleToolResult || it.ToolCallID == "" {
			continue
		}
		for i := k - 1; i >= 0; i-- {
			if items[i].Role == RoleAssistant && slices.ContainsFunc(items[i].ToolCalls, func(tc ToolCallRef) bool {
				return tc.ID == it.ToolCallID
			}) {
				out[k] = i
				break
			}
		}
	}
	return out
}

// cuttableAt is the cut-point rule written the slow, obvious way: a user or
// assistant item such that no tool result from it onwards answers a call
// made before it.
func cuttableAt(items []Item, answers map[int]int, j int) bool {
	if r := items[j].Role; r != RoleUser && r != RoleAssistant {
		return false
	}
	for k := j; k < len(items); k++ {
		if call, ok := answers[k]; ok && call < j {
			return false
		}
	}
	return true
}
