package workflows

// SubAgentCall is the task call a sub-agent's prompt runs for, on its
// first run when the calling prompt started it (its parent is the
// caller's prompt): the worker's tracing interceptor makes its span the
// call's (tracing.SubAgentPrompt). ("", "") for any other prompt.
func (in PromptInput) SubAgentCall(parentWorkflowID string) (toolCallID, subAgentSession string) {
	if in.Parent == nil || in.Continued != nil || parentWorkflowID != WorkflowID(in.Parent.SessionID) {
		return "", ""
	}
	return in.Parent.ToolCallID, in.SessionID
}
