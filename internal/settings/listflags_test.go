package settings

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// Issue 37 item 7: a list flag given twice keeps both values, for every
// list key of the table: `--tools.policy 'deny bash' --tools.policy 'allow
// read'` is two rules, not the last one.
func TestListFlagRepeatedAppends(t *testing.T) {
	for _, k := range Keys() {
		if k.Type != "list" {
			continue
		}
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		AddFlags(fs)
		if err := fs.Parse([]string{k.Flag + "=a", k.Flag, "b;c", k.Flag, ""}); err != nil {
			t.Fatalf("%s: %v", k.Flag, err)
		}
		if got := fs.Lookup(strings.TrimPrefix(k.Flag, "--")).Value.String(); got != "a;b;c" {
			t.Errorf("%s given a, b;c and \"\": value %q, want a;b;c", k.Flag, got)
		}
	}
	s, err := load(t, "", newEnv(t, nil), "--tools.policy", "deny bash", "--tools.policy", "allow read",
		"--tools.requireApproval", "bash", "--tools.requireApproval", "edit")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Tools.Policy, "|"); got != "deny bash|allow read" {
		t.Errorf("tools.policy %q, want deny bash|allow read", got)
	}
	if got := strings.Join(s.Tools.RequireApproval, "|"); got != "bash|edit" {
		t.Errorf("tools.requireApproval %q, want bash|edit", got)
	}
}

// Issue 37 item 7: a list written with commas is refused in one line that
// says the separator is ";" (where an item may hold a comma, as a policy
// rule may, when the item is refused).
func TestListWithCommasNamesTheSeparator(t *testing.T) {
	for _, args := range [][]string{
		{"--tools.requireApproval", "bash,edit"},
		{"--tools.enabled", "read, grep"},
		{"--tools.policy", "deny bash,allow read"},
		{"--retry.fallbackModels", "a,b"},
	} {
		_, err := load(t, "", newEnv(t, nil), args...)
		if err == nil || !strings.Contains(err.Error(), `list items are separated by ";", not ","`) ||
			!strings.Contains(err.Error(), args[0]) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line naming the separator and the flag", args, err)
		}
	}
	// A comma that belongs to an item stays.
	s, err := load(t, "", newEnv(t, nil), "--tools.policy", "deny bash regex:a{1,3}")
	if err != nil || len(s.Tools.Policy) != 1 {
		t.Fatalf("a rule holding a comma: %q, %v", s.Tools.Policy, err)
	}
}
