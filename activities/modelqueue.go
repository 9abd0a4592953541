package activities

// ModelQueue is the task queue of the model calls (CallModel, Summarize)
// of provider when the worker limits them fleet-wide
// (model.maxConcurrentCalls, model.callsPerSecond): the per-worker
// concurrency bound and the server-side rate limit of a task queue apply
// to that provider's calls only, and tool calls and workflow tasks never
// wait behind them.
func ModelQueue(taskQueue, provider string) string {
	return taskQueue + "-model-" + provider
}
