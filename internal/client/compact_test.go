package client

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/retry"
	"github.com/durableagent/durableagent/workflows"
)

// startClient records the workflow starts it is asked for.
type startClient struct {
	client.Client // nil: any other method panics

	opts []client.StartWorkflowOptions
	name []string
	err  error
	run  client.WorkflowRun
	// running is the workflow type Describe reports for the session's
	// running workflow.
	running string
}

func (c *startClient) DescribeWorkflowExecution(_ context.Context, id, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Execution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: runID},
		Type:      &commonpb.WorkflowType{Name: c.running},
		Status:    enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING,
	}}, nil
}

func (c *startClient) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, name any, _ ...any) (client.WorkflowRun, error) {
	c.opts = append(c.opts, opts)
	c.name = append(c.name, name.(string))
	if c.err != nil {
		return nil, c.err
	}
	return c.run, nil
}

// doneRun is a finished workflow run: Get returns res or err.
type doneRun struct {
	client.WorkflowRun
	id  string
	res *workflows.CompactResult
	err error
}

func (r doneRun) GetID() string    { return r.id }
func (r doneRun) GetRunID() string { return "run-1" }
func (r doneRun) Get(_ context.Context, out any) error {
	if r.res != nil {
		*out.(*workflows.CompactResult) = *r.res
	}
	return r.err
}

func compactInput() workflows.CompactInput {
	return workflows.CompactInput{PromptInput: workflows.PromptInput{
		SessionID: "s1", Model: activities.ModelRef{Provider: "scripted", Name: "scripted-1"},
		Retry: retry.DefaultSettings(), Compaction: compaction.DefaultSettings(),
	}}
}

// A manual compaction starts like a prompt, under the session's workflow
// id with the same conflict rules, and waits for its result.
func TestCompact_StartsUnderTheSessionID(t *testing.T) {
	done := &workflows.CompactResult{Status: agent.StatusCompleted, NothingToCompact: true}
	c := &startClient{run: doneRun{id: workflows.WorkflowID("s1"), res: done}}
	k := &Controller{Client: c, TaskQueue: "q"}
	res, err := k.Compact(context.Background(), compactInput(), nil)
	if err != nil || !res.NothingToCompact {
		t.Fatalf("Compact = %+v, %v; want nothing to compact", res, err)
	}
	if _, err := k.StartPrompt(context.Background(), workflows.PromptInput{
		SessionID: "s1", Message: "hi", Model: activities.ModelRef{Provider: "scripted", Name: "scripted-1"},
		Retry: retry.DefaultSettings(), Compaction: compaction.DefaultSettings(),
	}); err != nil {
		t.Fatalf("StartPrompt: %v", err)
	}
	if c.name[0] != workflows.CompactWorkflowName || c.name[1] != workflows.PromptWorkflowName {
		t.Fatalf("started %v", c.name)
	}
	for i, o := range c.opts {
		if o.ID != workflows.WorkflowID("s1") || o.TaskQueue != "q" ||
			o.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE ||
			o.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL ||
			!o.WorkflowExecutionErrorWhenAlreadyStarted || o.StaticSummary == "" {
			t.Fatalf("start %d (%s) options = %+v", i, c.name[i], o)
		}
	}
	if c.opts[0].StaticSummary != "compact session s1" {
		t.Fatalf("summary = %q", c.opts[0].StaticSummary)
	}
}

// A running prompt makes a compaction fail with ErrSessionBusy; an
// invalid input never reaches Temporal. The busy error says what runs
// (issue 15 item 8: a prompt refused while a compaction ran said "is
// running a prompt").
func TestCompact_SessionBusyAndBadInput(t *testing.T) {
	c := &startClient{err: serviceerror.NewWorkflowExecutionAlreadyStarted("running", "req", "run-0"), running: workflows.PromptWorkflowName}
	k := &Controller{Client: c, TaskQueue: "q"}
	_, err := k.Compact(context.Background(), compactInput(), nil)
	if !errors.Is(err, ErrSessionBusy) || !strings.Contains(err.Error(), "session s1 is running a prompt (workflow session-s1)") {
		t.Fatalf("Compact on a busy session: %v, want ErrSessionBusy naming the running prompt", err)
	}
	for typ, what := range map[string]string{workflows.CompactWorkflowName: "a compaction", workflows.BashWorkflowName: "a bash command"} {
		c.running = typ
		_, err := k.StartPrompt(context.Background(), workflows.PromptInput{
			SessionID: "s1", Message: "hi", Model: activities.ModelRef{Provider: "scripted", Name: "scripted-1"},
			Retry: retry.DefaultSettings(), Compaction: compaction.DefaultSettings(),
		})
		if want := "session busy: session s1 is running " + what + " (workflow session-s1); wait for it or abort it"; err == nil || err.Error() != want {
			t.Fatalf("prompt while %s runs: %v, want %q", typ, err, want)
		}
	}
	c.opts = c.opts[:1]
	bad := compactInput()
	bad.SessionID = ""
	if _, err := k.Compact(context.Background(), bad, nil); err == nil || len(c.opts) != 1 {
		t.Fatalf("Compact(no session) = %v after %d starts, want a validation error and no start", err, len(c.opts))
	}
}

// Compact decodes the result of a compaction that did not complete
// from the error's details: failed (ApplicationError), aborted by a
// signal (ApplicationError) or cancelled through Temporal (CanceledError).
func TestCompact_DecodesDetails(t *testing.T) {
	failed := workflows.CompactResult{Status: agent.StatusFailed, Error: "compaction failed: 401"}
	aborted := workflows.CompactResult{Status: agent.StatusAborted, Error: "compaction aborted"}
	cases := []struct {
		name       string
		err        error
		wantStatus string
	}{
		{"failed", temporal.NewNonRetryableApplicationError(failed.Error, workflows.ErrTypeCompactFailed, nil, failed), agent.StatusFailed},
		{"aborted by signal", temporal.NewNonRetryableApplicationError(aborted.Error, workflows.ErrTypeCompactAborted, nil, aborted), agent.StatusAborted},
		{"cancelled through Temporal", temporal.NewCanceledError(aborted), agent.StatusAborted},
		{"no result", errors.New("workflow terminated"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := &Controller{Client: &startClient{run: doneRun{id: workflows.WorkflowID("s1"), err: tc.err}}, TaskQueue: "q"}
			res, err := k.Compact(context.Background(), compactInput(), nil)
			if err == nil || res.Status != tc.wantStatus {
				t.Fatalf("Compact = %+v, %v; want status %q and an error", res, err, tc.wantStatus)
			}
			if !strings.Contains(err.Error(), "session s1") {
				t.Fatalf("error %q does not name the session", err)
			}
		})
	}
}

// One door to Temporal: outside this package (and the benchmark's bare
// baseline workflow) no program starts a workflow by hand, so the start
// options and the result decoding of Prompt and Compact exist once.
func TestOneDoor_WorkflowStartsOnlyInControl(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		dir := filepath.ToSlash(filepath.Dir(rel))
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "ExecuteWorkflow" {
				return true
			}
			switch {
			case dir == "internal/client":
			case isNext(sel.X):
				// A workflow interceptor hands the execution of a
				// workflow that runs to the next one: it starts none.
			case dir == "bench" && (mentions(call, "BareWorkflowName") || mentions(call, "streamSignalsWorkflowName")):
				// The benchmark's own baselines (a bare workflow, the
				// signals alternative to live output) are not sessions.
			default:
				t.Errorf("%s: ExecuteWorkflow outside internal/client; start session workflows with Controller", fset.Position(call.Pos()))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files under %s", checked, root)
	}
}

// isNext reports whether x is an interceptor's next one (x.Next).
func isNext(x ast.Expr) bool {
	sel, ok := x.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Next"
}

// mentions reports whether an argument of call names ident.
func mentions(call *ast.CallExpr, ident string) bool {
	found := false
	for _, a := range call.Args {
		ast.Inspect(a, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Name == ident {
				found = true
			}
			return !found
		})
	}
	return found
}
