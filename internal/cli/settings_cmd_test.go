package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSettings_UnknownSubcommandExitsTwo(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"settings", "bogus"}, `starter settings: unknown settings subcommand "bogus" (usage: starter settings [init] [--json])`},
		{[]string{"settings", "--json", "show"}, `starter settings: unknown settings subcommand "show"`},
		{[]string{"settings", "init", "extra"}, `starter settings: unexpected argument "extra" after init`},
	} {
		home := t.TempDir()
		code, out, stderr := runIn(t, home, "", nil, tc.args...)
		if code != ExitUsage {
			t.Fatalf("%v: exit %d, want %d; stdout %q", tc.args, code, ExitUsage, out)
		}
		if !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || out != "" {
			t.Fatalf("%v: stderr %q stdout %q, want one line starting %q and no output", tc.args, stderr, out, tc.want)
		}
		if _, err := os.Stat(filepath.Join(home, "settings.yaml")); err == nil {
			t.Fatalf("%v wrote a settings file", tc.args)
		}
	}
	// The valid forms still work.
	for _, args := range [][]string{{"settings"}, {"settings", "--json"}, {"settings", "init"}} {
		if code, _, stderr := runIn(t, t.TempDir(), "", nil, args...); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
}
