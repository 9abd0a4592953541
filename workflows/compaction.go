package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
)

// compactionEnabled reports compaction.enabled for the state query.
func (r *run) compactionEnabled() bool { return false }

// overflowRecoveryPossible reports whether an overflow error will be
// recovered by compact-and-continue (agent_end's willRetry).
func (r *run) overflowRecoveryPossible() bool { return false }

// checkCompaction is the compaction hook point of SPEC 1: an overflow
// error is never retried; it ends here.
func (r *run) checkCompaction(ctx workflow.Context, res activities.CallModelResult) (cont bool, result PromptResult, err error) {
	r.advance(res.EntryID)
	result, err = r.fail(ctx, fmt.Sprintf("context overflow: %s (compaction is not available)", res.ErrorMessage))
	return false, result, err
}
