package integration

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.temporal.io/api/serviceerror"

	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/workflows"
)

// Issue 37 item 10, as a user meets it: a prompt whose approval policy
// holds one rule too many (92 of --tools.policy) is refused before a
// workflow starts, in one short line that says "at most 91 items", and
// does not echo the rules back. At 1dc3898 the line said "models", and
// carried every rule (several KB).
func TestIntegration_TooManyPolicyRulesOneShortLine(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	id := testserver.Session("policy-count")
	args := []string{"prompt", "--session", id, "--workspace", t.TempDir()}
	for range 92 {
		args = append(args, "--tools.policy", "deny bash prefix:git push --force-with-lease")
	}
	rules := strings.TrimSuffix(strings.Repeat("deny bash prefix:git push --force-with-lease;", 92), ";")
	for how, run := range map[string]func() (int, string, string){
		"92 flags": func() (int, string, string) { return e.starter(append(args, "hi")...) },
		"92 rules in DURABLE_AGENT_TOOLS_POLICY": func() (int, string, string) {
			return e.starterWith(map[string]string{"DURABLE_AGENT_TOOLS_POLICY": rules}, "prompt", "--session", id, "--workspace", args[4], "hi")
		},
	} {
		code, out, stderr := run()
		if code == cli.ExitOK || out != "" {
			t.Errorf("%s: exit %d, stdout %q", how, code, out)
			continue
		}
		if strings.Count(stderr, "\n") != 1 || len(stderr) > 200 || !strings.Contains(stderr, "tools.policy: must hold at most 91 items, has 92") {
			t.Errorf("%s: stderr %q (%d bytes), want one short line saying at most 91 items", how, stderr, len(stderr))
		}
	}
	_, err := e.c.DescribeWorkflowExecution(context.Background(), workflows.WorkflowID(id), "")
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		t.Fatalf("a workflow started for a prompt with 92 rules (describe: %v)", err)
	}
}
