package compaction

import (
	"encoding/json"
	"strings"
	"testing"
)

// Characters are runes (Unicode code points), not bytes, so accented or
// CJK text is not counted two to four times over.
func TestEstimateItem_CeilRunesOverFour(t *testing.T) {
	tests := []struct {
		name string
		text string
		want int
	}{
		{"empty", "", 0},
		{"one char", "a", 1},
		{"four chars", "abcd", 1},
		{"five chars", "abcde", 2},
		{"eight chars", "abcdefgh", 2},
		{"runes not bytes: 5 runes in 6 bytes", "héllo", 2},
		{"runes not bytes: 4 CJK runes in 12 bytes", "日本語字", 1},
		{"long text", strings.Repeat("x", 4001), 1001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateItem(Item{Role: RoleUser, Text: tt.text}); got != tt.want {
				t.Errorf("EstimateItem(text %q) = %d, want %d", tt.text, got, tt.want)
			}
		})
	}
}

func TestEstimateItem_CountsEverythingSentToTheModel(t *testing.T) {
	tests := []struct {
		name string
		it   Item
		want int
	}{
		{"text", Item{Role: RoleUser, Text: "abcdefgh"}, 2},
		{"thinking and text rounded once", Item{Role: RoleAssistant, Text: "abc", Thinking: "abc"}, 2},
		{"tool call name and arguments", Item{Role: RoleAssistant, ToolCalls: []ToolCallRef{
			{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)}, // 4 + 12 runes
		}}, 4},
		{"tool result text", Item{Role: RoleToolResult, Text: strings.Repeat("y", 10), ToolName: "read"}, 3},
		{"caller's token count wins", Item{Role: RoleUser, Text: "abcdefgh", Tokens: 500}, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateItem(tt.it); got != tt.want {
				t.Errorf("EstimateItem(%+v) = %d, want %d", tt.it, got, tt.want)
			}
		})
	}
}

func TestEstimateContext_UsageAnchorPlusTrailingEstimates(t *testing.T) {
	items := []Item{
		{ID: "u1", Role: RoleUser, Text: strings.Repeat("a", 40)},      // 10
		{ID: "a1", Role: RoleAssistant, Text: strings.Repeat("b", 80)}, // 20
		{ID: "u2", Role: RoleUser, Text: strings.Repeat("c", 12)},      // 3
		{ID: "a2", Role: RoleAssistant, Tokens: 7},                     // 7
	}
	tests := []struct {
		name   string
		anchor *UsageAnchor
		want   int
	}{
		{"no anchor sums estimates", nil, 40},
		{"anchor on a1 adds the items after it", &UsageAnchor{Index: 1, Input: 900, CacheRead: 50, CacheWrite: 25, Output: 25}, 1000 + 3 + 7},
		{"anchor on the last item is the usage alone", &UsageAnchor{Index: 3, Input: 1234}, 1234},
		{"anchor on the first item", &UsageAnchor{Index: 0, Output: 100}, 100 + 20 + 3 + 7},
		{"anchor index past the end falls back", &UsageAnchor{Index: 4, Input: 1000}, 40},
		{"negative anchor index falls back", &UsageAnchor{Index: -1, Input: 1000}, 40},
		{"zero usage falls back (aborted call)", &UsageAnchor{Index: 1}, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateContext(items, tt.anchor); got != tt.want {
				t.Errorf("EstimateContext() = %d, want %d", got, tt.want)
			}
		})
	}
	if got := EstimateContext(nil, nil); got != 0 {
		t.Errorf("EstimateContext(nil, nil) = %d, want 0", got)
	}
}
