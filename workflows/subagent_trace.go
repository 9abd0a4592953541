package workflows

// TaskCall is the task call a SubAgent workflow runs: the call's id and
// the sub-agent's session. The worker's tracing interceptor puts them on
// the workflow's span, the task call's (tracing.TaskCall).
func (in SubAgentInput) TaskCall() (toolCallID, subAgentSession string) {
	return in.Call.ToolCallID, in.Prompt.SessionID
}

// SubAgentCall is the task call a sub-agent's prompt runs for, on its
// first run when the calling prompt started it (its parent is the
// caller's prompt, not a SubAgent workflow, which has the call's span):
// the worker's tracing interceptor makes its span the call's
// (tracing.SubAgentPrompt). ("", "") for any other prompt.
func (in PromptInput) SubAgentCall(parentWorkflowID string) (toolCallID, subAgentSession string) {
	if in.Parent == nil || in.Continued != nil || parentWorkflowID != WorkflowID(in.Parent.SessionID) {
		return "", ""
	}
	return in.Parent.ToolCallID, in.SessionID
}
