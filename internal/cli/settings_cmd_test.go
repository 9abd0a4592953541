package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/sandbox"
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

// `starter settings` shows each key's effective value and where it came
// from, in text and JSON: after `set-auto-retry off` a user sees that
// retry is off because of a line in the settings file, and how to undo it.
func TestSettings_ShowsEffectiveValueAndOrigin(t *testing.T) {
	home := t.TempDir()
	if code, _, stderr := runIn(t, home, "", nil, "set-auto-retry", "off"); code != ExitOK {
		t.Fatalf("set-auto-retry off: exit %d: %s", code, stderr)
	}
	file := filepath.Join(home, "settings.yaml")
	vars := map[string]string{"DURABLE_AGENT_RETRY_MAXRETRIES": "5"}
	args := []string{"settings", "--retry.baseDelayMs", "300"}

	code, out, stderr := runIn(t, home, "", vars, args...)
	if code != ExitOK {
		t.Fatalf("settings: exit %d: %s", code, stderr)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && !strings.HasPrefix(l, " ") {
			lines[f[0]] = strings.Join(f[1:], " ")
		}
	}
	for key, want := range map[string]string{
		"retry.enabled":     "false file " + file + ":",
		"retry.maxRetries":  "5 env DURABLE_AGENT_RETRY_MAXRETRIES",
		"retry.baseDelayMs": "300 flag --retry.baseDelayMs",
		"model.provider":    "scripted default",
		"temporal.address":  "127.0.0.1:1 env TEMPORAL_ADDRESS",
		"dataDir":           home + " env DURABLE_AGENT_HOME",
	} {
		if !strings.HasPrefix(lines[key], want) {
			t.Errorf("%s: %q, want it to start with %q\n%s", key, lines[key], want, out)
		}
	}
	if !strings.Contains(out, "settings file: "+file+" (read)") || !strings.Contains(out, "'starter set-auto-retry on' switches it back") {
		t.Errorf("output does not name the file or how to switch retry back on:\n%s", out)
	}
	// Issue 39 item 5: what a worker explains once is listed on demand.
	if !strings.Contains(out, "\n  retry.enabled (file "+file+":") || !strings.Contains(out, ") is not read by the worker: it takes effect in each prompt") {
		t.Errorf("output does not say that the worker does not read retry.enabled:\n%s", out)
	}

	code, out, stderr = runIn(t, home, "", vars, append(args, "--json")...)
	if code != ExitOK {
		t.Fatalf("settings --json: exit %d: %s", code, stderr)
	}
	var got struct {
		Retry struct {
			Enabled     bool  `json:"enabled"`
			BaseDelayMs int64 `json:"baseDelayMs"`
		} `json:"retry"`
		File    string `json:"settingsFile"`
		Origins map[string]struct {
			Origin string `json:"origin"`
			From   string `json:"from"`
		} `json:"origins"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("settings --json: %v\n%s", err, out)
	}
	if got.Retry.Enabled || got.Retry.BaseDelayMs != 300 || got.File != file {
		t.Errorf("settings --json values: %+v", got)
	}
	for key, want := range map[string]string{
		"retry.enabled": "file", "retry.maxRetries": "env", "retry.baseDelayMs": "flag", "model.name": "default",
	} {
		if o := got.Origins[key]; o.Origin != want {
			t.Errorf("origins[%s] = %+v, want %s", key, o, want)
		}
	}
	if o := got.Origins["retry.enabled"]; !strings.HasPrefix(o.From, file+":") {
		t.Errorf("origins[retry.enabled].from = %q, want %s:LINE", o.From, file)
	}
}

// Issue 22: `starter settings` shows what tools.sandbox.mode comes to on
// this machine and why: bubblewrap where it runs, off where it is missing
// (and who may then start), off when set so.
func TestSettings_ShowsTheEffectiveSandbox(t *testing.T) {
	code, out, stderr := runIn(t, t.TempDir(), "", nil, "settings")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(sandbox.DefaultBinary); err == nil {
		want := "effective on this machine: auto → bubblewrap (found " + sandbox.DefaultBinary
		if !strings.Contains(out, want) {
			t.Fatalf("settings output has no %q:\n%s", want, out)
		}
	}
	_, out, _ = runIn(t, t.TempDir(), "", map[string]string{"DURABLE_AGENT_TOOLS_SANDBOX_MODE": "off"}, "settings")
	if !strings.Contains(out, "effective on this machine: off (set on purpose)") {
		t.Fatalf("mode off is not shown as off:\n%s", out)
	}
	missing := filepath.Join(t.TempDir(), "bwrap")
	if got := sandboxEffective("auto", missing); !strings.HasPrefix(got, "auto → off (") || !strings.Contains(got, "worker --dev and the demo run bash unsandboxed") {
		t.Fatalf("auto without bwrap: %q", got)
	}
	if got := sandboxEffective("bubblewrap", missing); !strings.HasPrefix(got, "bubblewrap → none: a worker refuses to start (") {
		t.Fatalf("bubblewrap without bwrap: %q", got)
	}
}

// Issue 22: `starter settings` shows what tools.sandbox.memoryMB comes to
// on this machine: a memory cgroup per command, or the RLIMIT_AS fallback
// and why, as the worker says at start; nothing when it is 0.
func TestSettings_ShowsTheEffectiveMemoryLimit(t *testing.T) {
	if _, err := os.Stat(sandbox.DefaultBinary); err != nil {
		t.Skip("no bubblewrap here")
	}
	_, out, _ := runIn(t, t.TempDir(), "", map[string]string{"DURABLE_AGENT_TOOLS_SANDBOX_MEMORYMB": "256"}, "settings")
	cgroup := "effective on this machine: tools.sandbox.memoryMB 256 is a memory cgroup"
	rlimit := "effective on this machine: tools.sandbox.memoryMB 256 falls back to RLIMIT_AS"
	if !strings.Contains(out, cgroup) && !strings.Contains(out, rlimit) {
		t.Fatalf("settings output says neither %q nor %q:\n%s", cgroup, rlimit, out)
	}
	_, out, _ = runIn(t, t.TempDir(), "", nil, "settings")
	if strings.Contains(out, "tools.sandbox.memoryMB 0") {
		t.Fatalf("memoryMB 0 has an effective line:\n%s", out)
	}
}
