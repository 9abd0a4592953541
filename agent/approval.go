package agent

import (
	"fmt"
	"unicode/utf8"
)

// MaxApprovalReasonBytes bounds the reason of an approve_tool decision.
// The update's argument is recorded in workflow history as it is sent, so
// the workflow's validator rejects a longer reason (a rejected update never
// reaches history) and every client sends Bounded's.
const MaxApprovalReasonBytes = 4096

// Bounded returns p with a reason longer than MaxApprovalReasonBytes cut
// to fit, on a UTF-8 boundary, ending in a note that says it was cut and
// how long it was; the whole text, note included, is at most
// MaxApprovalReasonBytes.
func (p ApproveToolPayload) Bounded() ApproveToolPayload {
	if len(p.Reason) <= MaxApprovalReasonBytes {
		return p
	}
	note := fmt.Sprintf("… [reason cut: it had %d bytes, the first ones are kept]", len(p.Reason))
	keep := MaxApprovalReasonBytes - len(note)
	for keep > 0 && !utf8.RuneStart(p.Reason[keep]) {
		keep--
	}
	p.Reason = p.Reason[:keep] + note
	return p
}

// Approval is the approval policy of tool calls, one shape for the
// settings group tools, a prompt's input (workflows.ToolApproval) and a
// session's own settings (session.Settings); a key tag names each key.
// Policy is tools.policy, followed by policy.Default in a prompt's input
// and a session's settings; ApprovalTimeoutMs 0 waits without end.
type Approval struct {
	RequireApproval   []string `json:"requireApproval,omitempty" key:"tools.requireApproval"`
	ApprovalTimeoutMs int64    `json:"approvalTimeoutMs" key:"tools.approvalTimeoutMs"`
	Policy            []string `json:"policy,omitempty" key:"tools.policy"`
}
