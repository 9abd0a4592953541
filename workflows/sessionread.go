package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
)

// SessionReadWorkflowName is the registered name of the SessionRead
// workflow.
const SessionReadWorkflowName = "SessionRead"

// SessionRead reads one bounded page of the workers' session store for a
// client (docs/architecture.md, "Session reads"), in one local activity.
func SessionRead(ctx workflow.Context, in activities.ReadSessionInput) (activities.ReadSessionResult, error) {
	if err := in.Validate(); err != nil {
		return activities.ReadSessionResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         policy(500*time.Millisecond, 3, activities.ErrTypeBadInput),
	})
	var out activities.ReadSessionResult
	if err := workflow.ExecuteLocalActivity(lctx, activities.ReadSessionName, in).Get(ctx, &out); err != nil {
		return out, temporal.NewNonRetryableApplicationError(fmt.Sprintf("read the session store: %s", rootMessage(err)), ErrTypeBadInput, nil)
	}
	return out, nil
}
