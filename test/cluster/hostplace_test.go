//go:build linux

package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/internal/cli"
)

// testNewSessionPlacement: two tool hosts on one machine, h1 sees the
// workspace and h2 does not (an empty tmpfs over its parent, in h2's own
// mount namespace). A new session naming no host is created on h1 and
// runs its tool there, every time (before: on whichever worker took its
// first workflow task, and h2's failed with WorkspaceError and stayed
// pinned to h2); one naming h2, by --host or session.host, is refused in
// one line naming h2 and the directory, and no workflow starts; --host
// naming another host than an existing session's is refused too.
func testNewSessionPlacement(t *testing.T, c *cluster, tc client.Client, bash string) {
	hidden := filepath.Join(c.dir, "only-on-h1")
	ws := filepath.Join(hidden, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	c.startWorkerEnv("h1", map[string]string{"DURABLE_AGENT_TOOLS_HOST": "h1", "AGENT_WORKER": "h1"})
	c.hide = hidden
	c.startWorkerEnv("h2", map[string]string{"DURABLE_AGENT_TOOLS_HOST": "h2", "AGENT_WORKER": "h2"})
	c.hide = ""

	for i := range 4 {
		id := fmt.Sprintf("placed-%d", i)
		c.promptEnv(map[string]string{"--workspace": ws}, id, "work where the workspace is", 500, bash, "text:done").wait(t)
		if h := c.sessionHeader(t, id).Host; h != "h1" {
			t.Errorf("session %s created on host %q, want h1 (the only one with %s)", id, h, ws)
		}
		if got := c.toolOutputs(t, id); strings.Join(got, "|") != "ran on h1" {
			t.Errorf("session %s tool results %q, want one on h1", id, got)
		}
	}

	refused := func(what string, extra map[string]string, id, want string) {
		t.Helper()
		extra["--workspace"] = ws
		r := c.promptEnv(extra, id, "work on h2", 500, bash, "text:done")
		r.finish(t)
		msg := strings.TrimSpace(r.err.String())
		if r.code != cli.ExitUsage || strings.Contains(msg, "\n") || !strings.Contains(msg, want) {
			t.Errorf("%s: starter exited %d with %q, want %d and one line with %q", what, r.code, msg, cli.ExitUsage, want)
		}
		t.Logf("%s: %s", what, msg)
	}
	noWorkflow := func(id string) {
		t.Helper()
		_, err := tc.DescribeWorkflowExecution(context.Background(), "session-"+id, "")
		if nf := (*serviceerror.NotFound)(nil); !errors.As(err, &nf) {
			t.Errorf("session %s: describe its workflow: %v, want not found (refused before it starts)", id, err)
		}
	}
	missing := "tool host h2: workspace " + ws + ": no such file or directory"
	refused("--host h2", map[string]string{"--host": "h2"}, "on-h2-by-flag", missing)
	noWorkflow("on-h2-by-flag")
	refused("session.host h2", map[string]string{"DURABLE_AGENT_SESSION_HOST": "h2"}, "on-h2-by-setting", missing)
	noWorkflow("on-h2-by-setting")
	refused("--host h2 for a session of h1", map[string]string{"--host": "h2"}, "placed-0",
		`session placed-0 is on tool host "h1", not h2`)
}
