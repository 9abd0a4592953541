package app

import (
	"os"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/egress"
	"github.com/durableagent/durableagent/internal/sandbox"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/tools"
)

// TestMain lets the test binary play the worker binary, which an
// allowlist sandbox (its probe included) runs as its egress bridge.
func TestMain(m *testing.M) {
	egress.MaybeRunBridge(os.Args[1:])
	os.Exit(m.Run())
}

// The worker's runner under tools.sandbox.mode: the sandbox where
// bubblewrap works; where it does not, worker --dev runs bash unsandboxed
// and says so, any other worker refuses to start unless mode is off.
func TestToolRunner_ChoosesTheSandboxOrSaysWhyNot(t *testing.T) {
	s := settings.Defaults()
	s.DataDir = t.TempDir()

	r, note, err := ToolRunner(s, false)
	if err != nil {
		t.Skipf("bubblewrap unusable here: %v", err)
	}
	if _, ok := r.(*sandbox.Runner); !ok || note != "" {
		t.Fatalf("auto with a working bwrap: runner %T, note %q", r, note)
	}

	off := s
	off.Tools.Sandbox.Mode = settings.SandboxOff
	if r, note, err := ToolRunner(off, false); err != nil || r != tools.Local || !strings.Contains(note, "unsandboxed") {
		t.Fatalf("mode off: %T %q %v", r, note, err)
	}

	allow := s
	allow.Tools.Sandbox.Network = settings.SandboxNetworkAllowlist
	if _, _, err := ToolRunner(allow, true); err == nil || err.Error() != "tools.sandbox.network allowlist needs tools.sandbox.allowHosts (the hosts bash may reach); list some, or use network off" {
		t.Fatalf("network allowlist without allowHosts: %v", err)
	}
	allow.Tools.Sandbox.AllowHosts = []string{"proxy.golang.org"}
	if r, note, err := ToolRunner(allow, false); err != nil || note != "" {
		t.Fatalf("network allowlist: %T %q %v", r, note, err)
	} else if sr, ok := r.(*sandbox.Runner); !ok || sr.Config().Network != sandbox.NetworkAllowlist ||
		!sr.Config().Egress.Allow.AllowsName("proxy.golang.org", 443) {
		t.Fatalf("network allowlist: runner %T %+v", r, r)
	}

	bwrapBinary = "/nonexistent/bwrap"
	defer func() { bwrapBinary = "" }()
	if _, _, err := ToolRunner(s, false); err == nil || !strings.Contains(err.Error(), "refusing to run tools unsandboxed") ||
		!strings.Contains(err.Error(), "tools.sandbox.mode off") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("auto without bwrap, not dev: %v", err)
	}
	if r, note, err := ToolRunner(s, true); err != nil || r != tools.Local || !strings.Contains(note, "unsandboxed") || strings.Contains(note, "\n") {
		t.Fatalf("auto without bwrap, dev: %T %q %v", r, note, err)
	}
	strict := s
	strict.Tools.Sandbox.Mode = settings.SandboxBubblewrap
	if _, _, err := ToolRunner(strict, true); err == nil || !strings.HasPrefix(err.Error(), "tools.sandbox.mode bubblewrap: ") {
		t.Fatalf("mode bubblewrap without bwrap, even dev: %v", err)
	}
}
