package workflows

// TaskCall is the task call a SubAgent workflow runs: the call's id and
// the sub-agent's session. The worker's tracing interceptor puts them on
// the workflow's span, the task call's (tracing.TaskCall).
func (in SubAgentInput) TaskCall() (toolCallID, subAgentSession string) {
	return in.Call.ToolCallID, in.Prompt.SessionID
}
