package activities

import (
	"context"
	"os"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/durableagent/durableagent/internal/auth"
)

// cancelsNobodyAskedFor are the causes with which an activity's context
// ends without the workflow asking (issue 15 item 4): the SDK cancels it
// with the heartbeat's error when heartbeats fail (the server
// unreachable, or no longer knowing the call) and with context.Canceled
// when the worker shuts down; the deadline ends it with DeadlineExceeded.
// An abort the workflow asked for has a temporal CanceledError as cause.
var cancelsNobodyAskedFor = map[string]error{
	"server unreachable": serviceerror.NewUnavailable("connection refused"),
	"call unknown":       serviceerror.NewNotFound("activity already timed out"),
	"worker shutdown":    context.Canceled,
	"deadline":           context.DeadlineExceeded,
}

func activityName(name string) activity.RegisterOptions { return activity.RegisterOptions{Name: name} }

func workerOptionsWithContext(ctx context.Context) worker.Options {
	return worker.Options{BackgroundActivityContext: ctx}
}

type staticCreds struct{ id, secret string }

func (c staticCreds) Select(string, string) (auth.Credential, bool, error) {
	return auth.Credential{ID: c.id, Secret: c.secret}, true, nil
}
func (c staticCreds) MarkUsageLimit(string, string, string, int64) (auth.Switch, error) {
	return auth.Switch{}, nil
}
func (c staticCreds) Secrets() ([]string, error) { return []string{c.secret}, nil }

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
