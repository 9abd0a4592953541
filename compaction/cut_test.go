package compaction

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// Item builders with explicit token counts, so each case's arithmetic is
// visible.
func user(id string, tokens int) Item {
	return Item{ID: id, Role: RoleUser, Text: "u " + id, Tokens: tokens}
}

func assistant(id string, tokens int, callIDs ...string) Item {
	it := Item{ID: id, Role: RoleAssistant, Text: "a " + id, Tokens: tokens}
	for _, c := range callIDs {
		it.ToolCalls = append(it.ToolCalls, ToolCallRef{ID: c, Name: "bash", Arguments: json.RawMessage(`{}`)})
	}
	return it
}

func result(id, callID string, tokens int) Item {
	return Item{ID: id, Role: RoleToolResult, ToolCallID: callID, ToolName: "bash", Text: "out " + id, Tokens: tokens}
}

func summary(id, text string, tokens int) Item {
	return Item{ID: id, Role: RoleSummary, Text: text, Tokens: tokens}
}

func ids(items []Item) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// wantCut is the part of a Cut a case checks; nil lists mean empty.
type wantCut struct {
	nothing     bool
	firstKept   string
	toSummarize []string
	splitTurn   bool
	prefix      []string
	previous    string
}

func checkCut(t *testing.T, items []Item, got Cut, want wantCut) {
	t.Helper()
	checkCutInvariants(t, items, got)
	if got.NothingToCompact != want.nothing {
		t.Fatalf("NothingToCompact = %t, want %t (cut %+v)", got.NothingToCompact, want.nothing, got)
	}
	if got.FirstKeptID != want.firstKept {
		t.Errorf("FirstKeptID = %q, want %q", got.FirstKeptID, want.firstKept)
	}
	if g, w := ids(got.ToSummarize), append([]string{}, want.toSummarize...); !slices.Equal(g, w) {
		t.Errorf("ToSummarize = %v, want %v", g, w)
	}
	if got.SplitTurn != want.splitTurn {
		t.Errorf("SplitTurn = %t, want %t", got.SplitTurn, want.splitTurn)
	}
	if g, w := ids(got.SplitTurnPrefix), append([]string{}, want.prefix...); !slices.Equal(g, w) {
		t.Errorf("SplitTurnPrefix = %v, want %v", g, w)
	}
	if got.PreviousSummary != want.previous {
		t.Errorf("PreviousSummary = %q, want %q", got.PreviousSummary, want.previous)
	}
}

// checkCutInvariants holds for every cut of every input (FuzzPlanCut runs
// it on generated inputs).
func checkCutInvariants(t *testing.T, items []Item, c Cut) {
	t.Helper()
	leading := 0
	if len(items) > 0 && items[0].Role == RoleSummary {
		leading = 1
		if c.PreviousSummary != items[0].Text {
			t.Fatalf("PreviousSummary = %q, want the leading summary %q", c.PreviousSummary, items[0].Text)
		}
	} else if c.PreviousSummary != "" {
		t.Fatalf("PreviousSummary = %q without a leading summary item", c.PreviousSummary)
	}
	if c.NothingToCompact {
		if c.FirstKeptIndex != 0 || len(c.ToSummarize) != 0 || len(c.SplitTurnPrefix) != 0 || c.SplitTurn {
			t.Fatalf("NothingToCompact cut summarises something: %+v", c)
		}
		return
	}
	k := c.FirstKeptIndex
	if k <= leading || k >= len(items) {
		t.Fatalf("FirstKeptIndex = %d, want in (%d, %d)", k, leading, len(items))
	}
	if role := items[k].Role; role != RoleUser && role != RoleAssistant {
		t.Fatalf("first kept item %d has role %q, want user or assistant", k, role)
	}
	if c.FirstKeptID != items[k].ID {
		t.Fatalf("FirstKeptID = %q, want %q", c.FirstKeptID, items[k].ID)
	}
	// leading summary + ToSummarize + SplitTurnPrefix + kept = all items, in order.
	var all []Item
	all = append(all, items[:leading]...)
	all = append(all, c.ToSummarize...)
	all = append(all, c.SplitTurnPrefix...)
	all = append(all, items[k:]...)
	if !slices.Equal(ids(all), ids(items)) || len(all) != len(items) {
		t.Fatalf("parts %v + %v + %v + kept from %d do not make up the items %v",
			ids(items[:leading]), ids(c.ToSummarize), ids(c.SplitTurnPrefix), k, ids(items))
	}
	if c.SplitTurn != (len(c.SplitTurnPrefix) > 0) {
		t.Fatalf("SplitTurn = %t with prefix %v", c.SplitTurn, ids(c.SplitTurnPrefix))
	}
	if c.SplitTurn && (items[k].Role != RoleAssistant || c.SplitTurnPrefix[0].Role != RoleUser) {
		t.Fatalf("split turn must keep an assistant and start its prefix with a user: kept %q, prefix %v", items[k].Role, ids(c.SplitTurnPrefix))
	}
	// No kept tool result answers a call made before the cut.
	callAt := map[string]int{}
	for i, it := range items {
		for _, tc := range it.ToolCalls {
			if it.Role == RoleAssistant && tc.ID != "" {
				callAt[tc.ID] = i
			}
		}
		if i >= k && it.Role == RoleToolResult {
			if at, ok := callAt[it.ToolCallID]; ok && it.ToolCallID != "" && at < k {
				t.Fatalf("kept tool result %d answers call %q at %d, before the cut %d", i, it.ToolCallID, at, k)
			}
		}
	}
}

func TestPlanCut_CutsAtTurnBoundaries(t *testing.T) {
	tests := []struct {
		name  string
		items []Item
		keep  int
		want  wantCut
	}{
		{
			name:  "keeps the newest turns that reach the budget",
			items: []Item{user("u1", 100), assistant("a1", 100), user("u2", 100), assistant("a2", 100)},
			keep:  150,
			want:  wantCut{firstKept: "u2", toSummarize: []string{"u1", "a1"}},
		},
		{
			name:  "budget reached exactly on a user message",
			items: []Item{user("u1", 100), assistant("a1", 100), user("u2", 100), assistant("a2", 100)},
			keep:  200,
			want:  wantCut{firstKept: "u2", toSummarize: []string{"u1", "a1"}},
		},
		{
			name:  "zero budget keeps the newest valid item",
			items: []Item{user("u1", 10), assistant("a1", 10), user("u2", 10)},
			keep:  0,
			want:  wantCut{firstKept: "u2", toSummarize: []string{"u1", "a1"}},
		},
		{
			name: "estimates are used when Tokens is 0",
			items: []Item{
				{ID: "u1", Role: RoleUser, Text: string(make([]byte, 400))},      // 100
				{ID: "a1", Role: RoleAssistant, Text: string(make([]byte, 400))}, // 100
				{ID: "u2", Role: RoleUser, Text: string(make([]byte, 40))},       // 10
				{ID: "a2", Role: RoleAssistant, Text: string(make([]byte, 40))},  // 10
			},
			keep: 20,
			want: wantCut{firstKept: "u2", toSummarize: []string{"u1", "a1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkCut(t, tt.items, PlanCut(tt.items, tt.keep), tt.want)
		})
	}
}

func TestPlanCut_NeverSplitsToolCallFromResult(t *testing.T) {
	tests := []struct {
		name  string
		items []Item
		keep  int
		want  wantCut
	}{
		{
			name: "budget reached on a tool result moves forward to the next user message",
			items: []Item{
				user("u1", 10), assistant("a1", 10, "c1"), result("r1", "c1", 200),
				user("u2", 10), assistant("a2", 10),
			},
			keep: 50,
			want: wantCut{firstKept: "u2", toSummarize: []string{"u1", "a1", "r1"}},
		},
		{
			name: "no cut point after a huge result falls back to its call",
			items: []Item{
				user("u0", 10), assistant("a0", 10),
				user("u1", 10), assistant("a1", 10, "c1"), result("r1", "c1", 500),
			},
			keep: 100,
			want: wantCut{firstKept: "a1", toSummarize: []string{"u0", "a0"}, splitTurn: true, prefix: []string{"u1"}},
		},
		{
			name: "parallel calls keep every result with the call",
			items: []Item{
				user("u0", 10), assistant("a0", 10),
				user("u1", 10), assistant("a1", 10, "c1", "c2"), result("r1", "c1", 40), result("r2", "c2", 40),
			},
			keep: 60,
			want: wantCut{firstKept: "a1", toSummarize: []string{"u0", "a0"}, splitTurn: true, prefix: []string{"u1"}},
		},
		{
			name: "a late result keeps its call even past a user message",
			items: []Item{
				user("u0", 10), assistant("a0", 10),
				user("u1", 10), assistant("a1", 10, "c1"), user("u2", 10), assistant("a2", 10), result("r1", "c1", 10),
			},
			keep: 25,
			want: wantCut{firstKept: "a1", toSummarize: []string{"u0", "a0"}, splitTurn: true, prefix: []string{"u1"}},
		},
		{
			name: "a result with an unknown call id does not block a cut",
			items: []Item{
				user("u1", 100), assistant("a1", 100), user("u2", 10), result("r0", "gone", 10), assistant("a2", 10),
			},
			keep: 30,
			want: wantCut{firstKept: "u2", toSummarize: []string{"u1", "a1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkCut(t, tt.items, PlanCut(tt.items, tt.keep), tt.want)
		})
	}
}

func TestPlanCut_SplitTurnPrefixReported(t *testing.T) {
	items := []Item{
		user("u1", 10), assistant("a1", 10),
		user("u2", 20), assistant("a2", 100, "c1"), result("r1", "c1", 100),
		assistant("a3", 100, "c2"), result("r2", "c2", 100), assistant("a4", 50),
	}
	got := PlanCut(items, 200)
	checkCut(t, items, got, wantCut{
		firstKept:   "a3",
		toSummarize: []string{"u1", "a1"},
		splitTurn:   true,
		prefix:      []string{"u2", "a2", "r1"},
	})
	if kept := EstimateContext(items[got.FirstKeptIndex:], nil); got.FirstKeptIndex != 5 || kept != 250 {
		t.Errorf("FirstKeptIndex, kept tokens = %d, %d, want 5, 250", got.FirstKeptIndex, kept)
	}

	// The parts are cut to their length: appending to one cannot
	// overwrite the caller's items.
	_ = append(got.ToSummarize, user("x", 1))
	if items[2].ID != "u2" {
		t.Errorf("appending to ToSummarize overwrote items[2]: %q", items[2].ID)
	}
}

func TestPlanCut_SplitTurnWithoutOlderHistory(t *testing.T) {
	// The turn started with the first item: only its prefix is summarised.
	items := []Item{user("u1", 10), assistant("a1", 100, "c1"), result("r1", "c1", 100), assistant("a2", 50)}
	checkCut(t, items, PlanCut(items, 50), wantCut{firstKept: "a2", splitTurn: true, prefix: []string{"u1", "a1", "r1"}})
}

func TestPlanCut_TurnStartedBeforePreviousCompactionIsNotSplit(t *testing.T) {
	// The user message of the kept assistant's turn is inside the previous
	// summary: there is no prefix to report, the older part is summarised.
	items := []Item{
		summary("s", "old", 50), assistant("a1", 100, "c1"), result("r1", "c1", 100), assistant("a2", 50),
	}
	checkCut(t, items, PlanCut(items, 50), wantCut{firstKept: "a2", toSummarize: []string{"a1", "r1"}, previous: "old"})
}

func TestPlanCut_NothingToCompact(t *testing.T) {
	tests := []struct {
		name      string
		items     []Item
		keep      int
		firstKept string
		previous  string
	}{
		{"no items", nil, 100, "", ""},
		{"everything fits", []Item{user("u1", 10), assistant("a1", 10)}, 100, "u1", ""},
		{"everything after the summary fits", []Item{summary("s", "old", 5000), user("u1", 10), assistant("a1", 10)}, 50, "s", "old"},
		{"budget reached only on the first item", []Item{user("u1", 500), assistant("a1", 10)}, 100, "u1", ""},
		{"only the summary", []Item{summary("s", "old", 10)}, 0, "s", "old"},
		{"no valid cut point", []Item{result("r1", "c1", 100), result("r2", "c2", 100)}, 10, "r1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkCut(t, tt.items, PlanCut(tt.items, tt.keep), wantCut{nothing: true, firstKept: tt.firstKept, previous: tt.previous})
		})
	}
}

func TestPlanCut_PreviousSummaryMergedNotKept(t *testing.T) {
	items := []Item{
		summary("s", "## Goal\nold goal", 300),
		user("u1", 100), assistant("a1", 100), user("u2", 100), assistant("a2", 100),
	}
	got := PlanCut(items, 150)
	checkCut(t, items, got, wantCut{firstKept: "u2", toSummarize: []string{"u1", "a1"}, previous: "## Goal\nold goal"})

	prompt := SummaryPrompt(PromptInput{Items: got.ToSummarize, PreviousSummary: got.PreviousSummary})
	for _, want := range []string{"<previous-summary>\n## Goal\nold goal\n</previous-summary>", mergeInstructions} {
		if !strings.Contains(prompt, want) {
			t.Errorf("summary prompt lacks %q:\n%s", want, prompt)
		}
	}
}
