package cli

import (
	"fmt"
	"strings"

	"github.com/durableagent/durableagent/internal/sandbox"
	"github.com/durableagent/durableagent/internal/settings"
)

// sandboxEffective says what tools.sandbox.mode comes to on this machine
// and why, as a worker started here with these settings would decide
// (app.ToolRunner): bubblewrap is looked for (binary: "" the default)
// and probed by running `true` in a sandbox.
func sandboxEffective(mode, binary string) string {
	if mode == settings.SandboxOff {
		return "off (set on purpose): bash runs as the worker's user, unsandboxed"
	}
	r, err := sandbox.New(sandbox.Config{Binary: binary})
	if err == nil {
		err = r.Probe()
	}
	switch {
	case err == nil:
		return fmt.Sprintf("%s → bubblewrap (found %s; it ran `true` in a sandbox)", mode, r.Binary())
	case mode == settings.SandboxBubblewrap:
		return fmt.Sprintf("bubblewrap → none: a worker refuses to start (%v)", err)
	}
	return fmt.Sprintf("auto → off (%v): worker --dev and the demo run bash unsandboxed; any other worker refuses to start", err)
}

// sandboxMemoryEffective says what tools.sandbox.memoryMB comes to on
// this machine, as a worker started here would say it at start
// (sandbox.Runner.MemoryLimitNote): a memory cgroup per command, or the
// RLIMIT_AS fallback and why; "" when memoryMB is 0.
func sandboxMemoryEffective(memoryMB int64) string {
	if memoryMB <= 0 {
		return ""
	}
	r, err := sandbox.New(sandbox.Config{MemoryMB: memoryMB})
	if err != nil {
		return ""
	}
	note, _ := strings.CutPrefix(r.MemoryLimitNote(), "sandbox: ")
	return note
}
