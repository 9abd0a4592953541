package settings

import (
	"slices"
	"strings"
	"testing"
)

// Issue 23: `starter session set KEY VALUE` parses the value as a flag's:
// a list is ";"-separated, a bad value is refused in one line naming the
// key, an unknown key is named.
func TestSetText(t *testing.T) {
	s := Defaults()
	if err := SetText(&s, "tools.requireApproval", "bash;write"); err != nil || !slices.Equal(s.Tools.RequireApproval, []string{"bash", "write"}) {
		t.Fatalf("set list: %v %v", s.Tools.RequireApproval, err)
	}
	if err := SetText(&s, "tools.requireApproval", ""); err != nil || s.Tools.RequireApproval != nil {
		t.Fatalf("set empty list: %v %v", s.Tools.RequireApproval, err)
	}
	for _, tc := range []struct{ key, value, want string }{
		{"tools.approvalTimeoutMs", "soon", "tools.approvalTimeoutMs: must be a whole number"},
		{"tools.requireApproval", "bash;bosh", "tools.requireApproval[1]"},
		{"tools.nope", "x", `unknown key "tools.nope"`},
	} {
		err := SetText(&s, tc.key, tc.value)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("SetText(%s, %q) = %v, want one line with %q", tc.key, tc.value, err, tc.want)
		}
	}
}
