//go:build linux

package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/workflows"
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
	// Nothing is killed here: model calls need not be slow.
	fast := "200"
	c.startWorkerEnv("h1", map[string]string{"DURABLE_AGENT_TOOLS_HOST": "h1", "AGENT_WORKER": "h1", "DURABLE_AGENT_SCRIPTED_LATENCYMS": fast})
	c.hide = hidden
	c.startWorkerEnv("h2", map[string]string{"DURABLE_AGENT_TOOLS_HOST": "h2", "AGENT_WORKER": "h2", "DURABLE_AGENT_SCRIPTED_LATENCYMS": fast})
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

	testRPCAndSchedulePlacement(t, c, tc, ws, bash, missing, noWorkflow)
}

// testRPCAndSchedulePlacement: the new sessions of starter rpc and of a
// schedule go through the same placement as starter prompt (chat shares
// rpc's client.Session, checked by internal/tui's
// TestServer_NewSessionOnAHostWithoutIt): with h1 and h2 up and the
// workspace on h1 only, rpc's new sessions run on h1 and --host h2 is
// refused in its prompt's response; a schedule created without a host
// is placed on h1 at creation, and its run's fresh session runs there;
// one naming h2 (--host or session.host) is refused at creation in one
// line, and no schedule exists.
func testRPCAndSchedulePlacement(t *testing.T, c *cluster, tc client.Client, ws, bash, missing string, noWorkflow func(string)) {
	defer c.mark("placement-rpc-schedule", time.Now())
	faults := bash + ";text:done"
	rpc := func(id, until string, args ...string) string {
		t.Helper()
		in, feed, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		_, _ = io.WriteString(feed, `{"id":"p","type":"prompt","message":"work where the workspace is"}`+"\n")
		out := &lockedBuffer{}
		r := c.starter(in, out, append([]string{"rpc", "--session", id, "--workspace", ws, "--scripted.faults", faults}, args...)...)
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(out.String(), until) && time.Now().Before(deadline) && !r.exited() {
			time.Sleep(100 * time.Millisecond)
		}
		_ = feed.Close()
		r.wait(t)
		if !strings.Contains(out.String(), until) {
			t.Fatalf("starter rpc %s: no %s within a minute:\n%s%s", id, until, out.String(), r.err.String())
		}
		return out.String()
	}
	for i := range 2 {
		id := fmt.Sprintf("rpc-placed-%d", i)
		rpc(id, `"type":"prompt_end"`)
		if h := c.sessionHeader(t, id).Host; h != "h1" {
			t.Errorf("rpc session %s created on host %q, want h1 (the only one with %s)", id, h, ws)
		}
		if got := c.toolOutputs(t, id); strings.Join(got, "|") != "ran on h1" {
			t.Errorf("rpc session %s tool results %q, want one on h1", id, got)
		}
	}
	out := rpc("rpc-on-h2", `"command":"prompt"`, "--host", "h2")
	if !strings.Contains(out, `"success":false`) || !strings.Contains(out, missing) {
		t.Errorf("starter rpc --host h2: prompt response lacks the refusal %q:\n%s", missing, out)
	}
	noWorkflow("rpc-on-h2")

	schedule := func(extra ...string) *run {
		t.Helper()
		args := append([]string{"schedule", "create", "--every", "24h", "--workspace", ws, "--scripted.faults", faults}, extra...)
		r := c.starter(strings.NewReader(""), nil, append(args, "work where the workspace is")...)
		r.finish(t)
		return r
	}
	r := schedule("--id", "placed-nightly")
	if r.code != 0 || !strings.Contains(r.out.String(), "on tool host h1") {
		t.Fatalf("schedule create: exit %d, want it placed on h1:\n%s%s", r.code, r.out.String(), r.err.String())
	}
	h := tc.ScheduleClient().GetHandle(context.Background(), "placed-nightly")
	defer func() { _ = h.Delete(context.Background()) }()
	if err := h.Trigger(context.Background(), client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	var res workflows.ScheduledPromptResult
	deadline := time.Now().Add(time.Minute)
	for res.SessionID == "" && time.Now().Before(deadline) {
		if d, err := h.Describe(context.Background()); err == nil && len(d.Info.RecentActions) > 0 {
			wf := d.Info.RecentActions[0].StartWorkflowResult.WorkflowID
			if err := tc.GetWorkflow(context.Background(), wf, "").Get(context.Background(), &res); err != nil {
				t.Fatalf("scheduled run %s: %v", wf, err)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if res.SessionID == "" {
		t.Fatal("the triggered schedule started no run within a minute")
	}
	if h := c.sessionHeader(t, res.SessionID).Host; h != "h1" {
		t.Errorf("scheduled session %s created on host %q, want h1", res.SessionID, h)
	}
	if got := c.toolOutputs(t, res.SessionID); strings.Join(got, "|") != "ran on h1" {
		t.Errorf("scheduled session %s tool results %q, want one on h1", res.SessionID, got)
	}

	for _, extra := range [][]string{{"--host", "h2"}, {"--session.host", "h2"}} {
		r := schedule(append([]string{"--id", "on-h2"}, extra...)...)
		msg := strings.TrimSpace(r.err.String())
		if r.code != cli.ExitUsage || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "starter schedule create: "+missing) {
			t.Errorf("schedule create %s: exit %d with %q, want %d and one line with %q", extra, r.code, msg, cli.ExitUsage, missing)
		}
		if _, err := tc.ScheduleClient().GetHandle(context.Background(), "on-h2").Describe(context.Background()); err == nil {
			t.Errorf("schedule create %s: schedule on-h2 exists, want none", extra)
		}
		t.Logf("schedule create %s: %s", extra, msg)
	}
}

// lockedBuffer is an output read while the starter writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
