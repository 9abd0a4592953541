package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
)

// CompactWorkflowName is the registered name of the Compact workflow.
const CompactWorkflowName = "Compact"

// Error types of a manual compaction that did not complete
// (temporal.ApplicationError.Type(); details hold the CompactResult).
const (
	ErrTypeCompactFailed  = "CompactFailed"
	ErrTypeCompactAborted = "CompactAborted"
)

// CompactInput is the input of the Compact workflow: a manual compaction
// of a session outside a prompt. It is the prompt input of the session's
// settings (CompactInputFrom keeps those a compaction reads: the model,
// retry of the summary call, compaction's keepRecentTokens, the
// timeouts) without a message. A manual compaction runs even when
// compaction.enabled is false: that setting switches off the automatic
// ones only.
type CompactInput struct {
	PromptInput
	// CustomInstructions are the user's wishes for the summary.
	CustomInstructions string `json:"customInstructions,omitempty"`
}

// CompactInputFrom makes the manual compaction input of a session from
// the prompt input the same settings would give. The scripted model's
// fault script (scripted.faults) plays on a manual compaction's one model
// call, its summary call, as it plays on a prompt's calls.
func CompactInputFrom(p PromptInput, instructions string) CompactInput {
	m := p.Model
	if len(m.SummaryFaults) == 0 {
		m.SummaryFaults = m.Faults
	}
	m.Faults = nil
	return CompactInput{CustomInstructions: instructions, PromptInput: PromptInput{SessionID: p.SessionID, Model: m,
		Retry: p.Retry, Compaction: p.Compaction, ModelTimeoutMs: p.ModelTimeoutMs, HeartbeatTimeoutMs: p.HeartbeatTimeoutMs}}
}

// Validate reports the problems of the input in one line, as
// PromptInput.Validate does for the same settings.
func (in CompactInput) Validate() error {
	p := in.PromptInput
	p.Message = "(manual compaction)"
	return p.problems().invalid("compact")
}

// CompactResult is the result of a manual compaction. A failed or aborted
// one returns an ApplicationError of type ErrTypeCompactFailed /
// ErrTypeCompactAborted whose details hold it.
type CompactResult struct {
	// Status is agent.StatusCompleted, StatusFailed or StatusAborted.
	Status string `json:"status"`
	// Result describes the compaction entry written (nil when nothing
	// was compacted).
	Result *agent.CompactionResult `json:"result,omitempty"`
	// NothingToCompact: the recent messages are the whole context.
	NothingToCompact bool   `json:"nothingToCompact,omitempty"`
	Error            string `json:"error,omitempty"`
	// LeafID is the session entry the conversation ends at.
	LeafID string `json:"leafId"`
	// Events is the number of events the workflow emitted.
	Events int64 `json:"events"`
	// LastEvents are the run's last events, as PromptResult.LastEvents:
	// where a client reads a finished compaction's events.
	LastEvents []agent.Event `json:"lastEvents,omitempty"`
}

// Compact compacts a session now, outside a prompt (`starter compact`),
// under the session's workflow id, serving a prompt's queries and signals
// and ending its events with prompt_end.
func Compact(ctx workflow.Context, in CompactInput) (CompactResult, error) {
	if err := in.Validate(); err != nil {
		return CompactResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	r := newRun(ctx, in.PromptInput)
	r.manualCompaction = true
	if err := r.registerHandlers(ctx); err != nil {
		return CompactResult{}, err
	}
	r.startSignalPump(ctx)

	var loaded activities.LoadSessionResult
	err := workflow.ExecuteActivity(storeOptions(ctx), activities.LoadSessionName,
		activities.LoadSessionInput{SessionID: in.SessionID}).Get(ctx, &loaded)
	if err != nil {
		return r.endCompact(ctx, CompactResult{Status: agent.StatusFailed,
			Error: fmt.Sprintf("load session %s: %s", in.SessionID, rootMessage(err))})
	}
	r.LeafID, r.MessageCount = loaded.LeafID, loaded.MessageCount
	if !loaded.Exists || loaded.LeafID == "" {
		return r.endCompact(ctx, CompactResult{Status: agent.StatusCompleted, NothingToCompact: true})
	}

	out := r.summarize(ctx, in.CustomInstructions)
	switch {
	case out.aborted:
		return r.endCompact(ctx, CompactResult{Status: agent.StatusAborted, Error: "compaction aborted"})
	case out.err != "":
		return r.endCompact(ctx, CompactResult{Status: agent.StatusFailed, Error: "compaction failed: " + out.err})
	case out.res.NothingToCompact:
		return r.endCompact(ctx, CompactResult{Status: agent.StatusCompleted, NothingToCompact: true})
	}
	r.LeafID, r.MessageCount = out.res.EntryID, out.res.MessageCount
	return r.endCompact(ctx, CompactResult{Status: agent.StatusCompleted, Result: compactionResult(out.res)})
}

// endCompact emits prompt_end and returns res, as an error unless the
// compaction completed.
func (r *run) endCompact(ctx workflow.Context, res CompactResult) (CompactResult, error) {
	r.status = res.Status
	r.emit(ctx, agent.Event{Type: agent.EventPromptEnd, Status: res.Status, ErrorMessage: res.Error})
	res.LeafID, res.Events, res.LastEvents = r.LeafID, r.seq, r.lastEvents()
	switch res.Status {
	case agent.StatusFailed:
		return res, temporal.NewNonRetryableApplicationError(res.Error, ErrTypeCompactFailed, nil, res)
	case agent.StatusAborted:
		if ctx.Err() != nil { // cancelled through Temporal, as in finishAborted
			return res, temporal.NewCanceledError(res)
		}
		return res, temporal.NewNonRetryableApplicationError(res.Error, ErrTypeCompactAborted, nil, res)
	}
	return res, nil
}
