package agent

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A long approve_tool reason is cut to MaxApprovalReasonBytes, note
// included, on a rune boundary; a short one is sent as it is.
// Spec 15.2.2.
func TestApproveToolPayload_Bounded(t *testing.T) {
	short := ApproveToolPayload{ToolCallID: "c1", Reason: "not on main"}
	if got := short.Bounded(); got != short {
		t.Fatalf("short reason changed: %+v", got)
	}
	for _, unit := range []string{"x", "é", "日本", "🙂"} {
		long := strings.Repeat(unit, 100*1024/len(unit)+1)
		got := ApproveToolPayload{ToolCallID: "c1", Reason: long}.Bounded()
		if len(got.Reason) > MaxApprovalReasonBytes || !utf8.ValidString(got.Reason) ||
			!strings.HasPrefix(got.Reason, strings.Repeat(unit, 100)) || !strings.Contains(got.Reason, "reason cut") ||
			got.ToolCallID != "c1" {
			t.Errorf("%q: %d bytes, valid %t, ends %q", unit, len(got.Reason), utf8.ValidString(got.Reason), got.Reason[len(got.Reason)-80:])
		}
	}
}
