package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
)

// Issue 26: `starter top` lists the running prompts of the task queue with
// what each does now, read from their memos in one visibility call: one
// job in a retry's backoff (with when it fires), one waiting for approval
// of a bash call after a tool call ran; a finished prompt leaves the list.
func TestIntegration_TopShowsWhatEachJobDoes(t *testing.T) {
	e := newEnv(t)
	e.s.Retry.BaseDelayMs = 120_000 // the backoff outlasts the test
	e.startWorker()
	ctx := context.Background()

	backoff := client.PromptInput(e.s, "top-backoff", "wait for it")
	backoff.Model.Faults = []string{e503}
	if _, err := e.k.StartPrompt(ctx, backoff); err != nil {
		t.Fatal(err)
	}
	approval := client.PromptInput(e.s, "top-approval", "run it")
	approval.Workspace = t.TempDir()
	approval.Approval.RequireApproval = []string{"bash"}
	approval.Model.Faults = []string{`tool:read {"path":"missing.txt"}`, `tool:bash {"command":"echo hi"}`, `text:done`}
	approvalRun, err := e.k.StartPrompt(ctx, approval)
	if err != nil {
		t.Fatal(err)
	}

	var jobs map[string]client.Job
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, out, stderr := e.starter("top", "--json")
		if code != cli.ExitOK {
			t.Fatalf("top --json: exit %d: %s", code, stderr)
		}
		var list []client.Job
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("top --json printed %q: %v", out, err)
		}
		jobs = map[string]client.Job{}
		for _, j := range list {
			jobs[j.SessionID] = j
		}
		b, a := jobs["top-backoff"].Job, jobs["top-approval"].Job
		if b != nil && b.Status == agent.JobBackoff && a != nil && a.Status == agent.JobApproval {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("top never showed a backoff and an approval: %s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if b := jobs["top-backoff"].Job; b.Until == nil || b.Until.Before(time.Now().Add(time.Minute)) || b.Turn != 1 {
		t.Errorf("backoff job %+v: want the retry's fire time about 2 minutes out, turn 1", *b)
	}
	if a := jobs["top-approval"].Job; a.ToolCalls != 1 || a.Turn != 2 {
		t.Errorf("approval job %+v: want turn 2 after the read call ran (1 tool call)", *a)
	}
	if j := jobs["top-backoff"]; j.Model == "" || j.StartedAt.IsZero() {
		t.Errorf("job %+v lacks its model or start", j)
	}

	// The Temporal UI's list (and `temporal workflow list --query`)
	// filters jobs by the search attribute beside the memo.
	q := fmt.Sprintf("%s = 'approval' AND ExecutionStatus = 'Running' AND TaskQueue = '%s'", agent.SearchAttrStatus, e.s.Temporal.TaskQueue)
	var found []string
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := e.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q})
		if err != nil {
			t.Fatalf("list %s: %v", q, err)
		}
		found = found[:0]
		for _, ex := range resp.GetExecutions() {
			found = append(found, ex.GetExecution().GetWorkflowId())
		}
		if len(found) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(found) != 1 || found[0] != "session-top-approval" {
		t.Errorf("jobs with %s: %v, want session-top-approval only", q, found)
	}

	code, out, stderr := e.starter("top", "--once")
	if code != cli.ExitOK || !strings.Contains(out, "running prompts on task queue") {
		t.Fatalf("top --once: exit %d\n%s%s", code, out, stderr)
	}
	t.Logf("starter top --once:\n%s", out)
	for _, want := range []string{"SESSION", "top-backoff", "backoff until", "top-approval", "approval"} {
		if !strings.Contains(out, want) {
			t.Errorf("top --once lacks %q:\n%s", want, out)
		}
	}

	for _, id := range []string{"top-backoff", "top-approval"} {
		if err := e.k.Abort(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		_, out, _ := e.starter("top", "--once")
		if strings.HasPrefix(out, "no running prompts") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("aborted prompts still listed:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The approval prompt's history (memo upserts, a tool call, an
	// approval wait, an abort) is the job-memo shape's replay fixture.
	_, _ = e.result(approvalRun)
	exportAndReplay(t, e, approvalRun.GetID(), approvalRun.GetRunID(), jobMemoFixture)
}

// jobMemoFixture is a prompt that published its job in its memo and
// search attributes. Regenerate
// with UPDATE_REPLAY_HISTORY=1 go test -run TopShowsWhatEachJobDoes ./test/integration
var jobMemoFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_job_memo_history.json")
