package cli

import (
	"bytes"
	"testing"
)

// docs/spec.md "Upgrades": the binaries name their release; v0.1.0 is
// the baseline whose histories later releases replay.
func TestVersion_StarterPrintsTheRelease(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		var out, errOut bytes.Buffer
		code := Main([]string{arg}, Env{Stdout: &out, Stderr: &errOut})
		if code != ExitOK || out.String() != "starter v0.1.0\n" {
			t.Errorf("starter %s: exit %d, stdout %q, stderr %q; want exit 0 and \"starter v0.1.0\"", arg, code, out.String(), errOut.String())
		}
	}
}
