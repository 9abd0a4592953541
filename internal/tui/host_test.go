package tui

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/api/serviceerror"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/workflows"
)

// A chat's new session goes through the placement of starter prompt
// (client.Controller.Place, docs/cluster.md), as rpc's does
// (test/cluster NewSessionGoesToTheHostWithItsWorkspace): session.host
// naming a host whose workers lack the workspace is refused before the
// prompt starts, in one line naming the host and the directory, and no
// workflow starts.
func TestServer_NewSessionOnAHostWithoutItsWorkspace(t *testing.T) {
	id := testserver.Session("tui-host")
	host := ""
	b := served(t, id, func(s *settings.Settings) { host = app.ToolHost(*s); s.Session.Host = host })
	b.Workspace = filepath.Join(t.TempDir(), "gone")
	d := newDriver(t, b)
	d.typeLine("hello")
	want := "Prompt not started: tool host " + host + ": workspace " + b.Workspace + ": no such file or directory"
	squash := func(s string) string { return strings.Join(strings.Fields(s), "") } // the screen wraps it
	d.until("the refusal", func() bool { return strings.Contains(squash(d.m.View()), squash(want)) })
	_, err := worker.stack.Client.DescribeWorkflowExecution(context.Background(), workflows.WorkflowID(id), "")
	if nf := (*serviceerror.NotFound)(nil); !errors.As(err, &nf) {
		t.Errorf("describe the session's workflow: %v, want not found (refused before it starts)", err)
	}
}
