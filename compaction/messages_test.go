package compaction

import (
	"strings"
	"testing"
)

// SPEC 9: the message that fails an overflow with nothing to compact gives
// advice that can work. For a new session's first prompt (the run context
// is the prompt alone) no keepRecentTokens finds anything to summarise, so
// the advice is a shorter prompt or a larger window; with older messages
// in the context a smaller keepRecentTokens does compact them.
func TestNothingToCompactMessageFor_AdviceThatWorks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items []Item
		// helps: some smaller keepRecentTokens finds something to compact.
		helps bool
		want  []string
		not   []string
	}{
		{
			name:  "the prompt alone",
			items: []Item{user("u1", 300_000)},
			want:  []string{"the prompt alone exceeds the context window", "shorten the prompt", "larger context window"},
			not:   []string{"keepRecentTokens", "new session"},
		},
		{
			name:  "older messages kept verbatim",
			items: []Item{user("u1", 5000), assistant("a1", 5000), user("u2", 5000)},
			helps: true,
			want:  []string{"lower compaction.keepRecentTokens"},
			not:   []string{"prompt alone"},
		},
		{
			name:  "a tool loop in the first prompt",
			items: []Item{user("u1", 100), assistant("a1", 100, "c1"), result("r1", "c1", 10_000)},
			helps: true,
			want:  []string{"lower compaction.keepRecentTokens"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !PlanCut(tc.items, DefaultSettings().KeepRecentTokens).NothingToCompact {
				t.Fatalf("the default keep finds something to compact: not this case")
			}
			helps := false
			for _, keep := range []int{0, 1, 100, 1000, 10_000} {
				helps = helps || !PlanCut(tc.items, keep).NothingToCompact
			}
			if helps != tc.helps {
				t.Fatalf("a smaller keepRecentTokens helps: %t, want %t", helps, tc.helps)
			}
			msg := NothingToCompactMessageFor(len(tc.items))
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(msg, n) {
					t.Errorf("%q says %q", msg, n)
				}
			}
		})
	}
	if NothingToCompactMessageFor(0) != PromptExceedsWindowMessage {
		t.Fatal("an empty context is not a context with older messages")
	}
}
