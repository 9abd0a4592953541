package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/settings"
)

// runAbort sends abort to the session's running prompt. A prompt whose
// workflow task fails on every attempt cannot process it (issue 20 item
// 1): the command says so in one line and names the way out, and with
// --terminate terminates that workflow, recording why. --terminate never
// terminates a healthy prompt: it gets the abort, which keeps what was
// already done and ends it as aborted.
func runAbort(ctx context.Context, env Env, args []string) int {
	c := newFlags("abort", env)
	terminate := c.fs.Bool("terminate", false, "terminate the prompt's workflow if its workflow task keeps failing (it cannot process the abort)")
	if !c.parseArgs(env, args, 0, "") {
		return ExitUsage
	}
	return c.dialed(ctx, func(k *client.Controller, _ settings.Settings) int {
		// The signal is sent in any case: a wedged prompt processes it if its
		// workflow task ever succeeds again (a fixed worker deployed).
		if err := k.Abort(ctx, c.session); err != nil {
			return fail(env, "abort", err)
		}
		w, err := k.Wedged(ctx, c.session)
		if err != nil && !errors.Is(err, client.ErrNoRunningPrompt) {
			fmt.Fprintf(env.Stderr, "starter abort: sent abort, but could not check that the prompt can process it: %s\n", line.First(err.Error()))
		}
		if w == nil {
			printResult(env, c.json, map[string]any{"success": true, "command": "abort", "sessionId": c.session}, "sent abort to session "+c.session)
			return ExitOK
		}
		if !*terminate {
			hint := "starter abort --session " + c.session + " --terminate"
			msg := fmt.Sprintf("session %s's prompt cannot process the abort: its workflow task failed %d times (%s); end it with: %s",
				c.session, w.Attempt, w.Failure, hint)
			if c.json {
				printResult(env, true, map[string]any{"success": false, "command": "abort", "sessionId": c.session,
					"error": msg, "workflowTaskAttempt": w.Attempt, "workflowTaskFailure": w.Failure, "terminateWith": hint}, "")
			}
			fmt.Fprintf(env.Stderr, "starter abort: %s\n", msg)
			return ExitFailed
		}
		if err := k.TerminateWedged(ctx, w); err != nil {
			return fail(env, "abort", err)
		}
		printResult(env, c.json, map[string]any{"success": true, "command": "abort", "sessionId": c.session, "terminated": true,
			"workflowId": w.WorkflowID, "runId": w.RunID},
			fmt.Sprintf("terminated session %s's prompt (workflow %s): its workflow task failed %d times and could not process the abort",
				c.session, w.WorkflowID, w.Attempt))
		return ExitOK
	})
}
