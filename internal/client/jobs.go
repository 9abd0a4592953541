package client

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/workflows"
)

// MaxJobs bounds Jobs: the running prompts it lists at most.
const MaxJobs = 1000

// Job is a running prompt as Temporal's visibility lists it.
type Job struct {
	SessionID  string    `json:"sessionId"`
	WorkflowID string    `json:"workflowId"`
	RunID      string    `json:"runId"`
	Model      string    `json:"model"`
	StartedAt  time.Time `json:"startedAt"`
	// Job is what the prompt does now; nil when its workflow has not
	// published it (a prompt started by an older release, or one whose
	// first workflow task has not run).
	Job *agent.JobStatus `json:"job,omitempty"`
	// ParentSession is, for a sub-agent's prompt, the session whose task
	// call runs it ("": a prompt a user started).
	ParentSession string `json:"parentSession,omitempty"`
}

// Jobs lists the running prompts of the controller's task queue, oldest
// first, from their memos: one visibility call per 100 jobs, however many
// jobs there are (no query reaches a worker). more says MaxJobs cut it.
// A sub-agent's prompt is a child of its parent's prompt.
func (k *Controller) Jobs(ctx context.Context) (jobs []Job, more bool, err error) {
	q := fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND TaskQueue = '%s'",
		workflows.PromptWorkflowName, k.TaskQueue)
	parentOf := map[int]string{} // job index → its parent's workflow id
	dc := k.dataConverter()
	var token []byte
	for {
		resp, err := k.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, PageSize: 100, NextPageToken: token})
		if err != nil {
			return nil, false, fmt.Errorf("list running prompts on task queue %s: %w", k.TaskQueue, err)
		}
		for _, ex := range resp.GetExecutions() {
			if len(jobs) == MaxJobs {
				return linkSubAgents(jobs, parentOf), true, nil
			}
			if p := ex.GetParentExecution(); p != nil {
				parentOf[len(jobs)] = p.GetWorkflowId()
			}
			j := Job{WorkflowID: ex.GetExecution().GetWorkflowId(), RunID: ex.GetExecution().GetRunId(),
				StartedAt: ex.GetStartTime().AsTime()}
			fields := ex.GetMemo().GetFields()
			if !decode(dc, fields["sessionId"], &j.SessionID) {
				j.SessionID = strings.TrimPrefix(j.WorkflowID, workflows.WorkflowIDPrefix)
			}
			decode(dc, fields["model"], &j.Model)
			var js agent.JobStatus
			if decode(dc, fields[agent.MemoJob], &js) {
				j.Job = &js
			}
			jobs = append(jobs, j)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return linkSubAgents(jobs, parentOf), false, nil
		}
	}
}

// linkSubAgents sets the parent session of each sub-agent's prompt (a
// job whose parent is the prompt of the session its own derives from),
// and sorts the jobs.
func linkSubAgents(jobs []Job, parentOf map[int]string) []Job {
	for i, p := range parentOf {
		if parent := strings.TrimPrefix(p, workflows.WorkflowIDPrefix); derivesFrom(jobs[i].SessionID, parent) {
			jobs[i].ParentSession = parent
		}
	}
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].StartedAt.Before(jobs[j].StartedAt) })
	return jobs
}

// derivesFrom says whether sub is the session of a task call of parent
// (workflows.SubAgentSessionID: the parent's id, cut to fit the limit,
// then ".task-").
func derivesFrom(sub, parent string) bool {
	i := strings.LastIndex(sub, ".task-")
	if i <= 0 {
		return false
	}
	return sub[:i] == parent || len(sub) == session.MaxIDLen && strings.HasPrefix(parent, sub[:i]) // a longer parent's id is cut
}

// decode reads one memo field; a missing or unreadable one is left out.
func decode(dc converter.DataConverter, p *commonpb.Payload, v any) bool {
	return p != nil && dc.FromPayload(p, v) == nil
}
