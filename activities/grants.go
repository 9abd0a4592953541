package activities

import (
	"context"
	"fmt"
	"slices"
	"unicode/utf8"

	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/internal/policy"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/tools"
)

// Session grants ("allow for this session", internal/policy.Grant) are
// kept beside the session under grantsKey, so every later prompt of the
// session applies them: BeginPrompt hands them to the workflow.

// RecordGrantName is the local activity that keeps a session grant.
const RecordGrantName = "RecordGrant"

// MaxSessionGrants bounds the grants a session keeps (and a prompt's
// input carries); a grant past it is refused.
const MaxSessionGrants = 64

const grantsKey = "approval-grants"

// RecordGrantInput is the input of RecordGrant.
type RecordGrantInput struct {
	SessionID string       `json:"sessionId"`
	Grant     policy.Grant `json:"grant"`
}

// RecordGrant adds a grant to the session's grants (a grant already kept
// is not added twice, so a re-run is harmless).
func (a *Activities) RecordGrant(_ context.Context, in RecordGrantInput) error {
	if err := session.ValidateID(in.SessionID); err != nil {
		return badInput(err)
	}
	var grants []policy.Grant
	if err := a.readAside(in.SessionID, grantsKey, "session grants", &grants); err != nil {
		return err
	}
	if slices.Contains(grants, in.Grant) {
		return nil
	}
	if len(grants) >= MaxSessionGrants {
		msg := fmt.Sprintf("session %s keeps %d grants already, the most it may", in.SessionID, MaxSessionGrants)
		return temporal.NewNonRetryableApplicationError(msg, ErrTypeBadInput, nil)
	}
	return a.keepAside(in.SessionID, grantsKey, "session grant", append(grants, in.Grant))
}

// policyArg is what the approval policy matches of a call's arguments: a
// bash command, else a path, cut to MaxPolicyArgBytes on a rune start.
func policyArg(tool string, args map[string]any) (string, bool) {
	key := "path"
	if tools.SpecOf(tool).Command {
		key = "command"
	}
	v, _ := args[key].(string)
	if len(v) <= MaxPolicyArgBytes {
		return v, false
	}
	n := MaxPolicyArgBytes
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return v[:n], true
}
