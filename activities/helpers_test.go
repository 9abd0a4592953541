package activities

import (
	"context"
	"os"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
)

func activityName(name string) activity.RegisterOptions { return activity.RegisterOptions{Name: name} }

func workerOptionsWithContext(ctx context.Context) worker.Options {
	return worker.Options{BackgroundActivityContext: ctx}
}

type staticCreds struct{ id, secret string }

func (c staticCreds) Select(string, string) (string, string, bool, error) {
	return c.id, c.secret, true, nil
}
func (c staticCreds) MarkUsageLimitReached(string, string, int64) (bool, string, error) {
	return false, "", nil
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
