package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

const compactUsage = "starter compact [--session ID] [--instructions TEXT] [--fault TEXT]... [--json]"

// runCompact runs the Compact workflow under the session's workflow id,
// so it fails with "session busy" while a prompt runs, and waits for it.
func runCompact(ctx context.Context, env Env, args []string) int {
	c := newFlags("compact", env)
	instructions := c.fs.String("instructions", "", "extra instructions for the summary (e.g. \"keep the SQL schema\")")
	faults := c.fs.StringArray("fault", nil, "scripted model: inject this error into the summary call (repeatable; e.g. \"503 Service Unavailable\")")
	if !c.parseArgs(env, args, 0, compactUsage) {
		return ExitUsage
	}
	if err := scripted.ValidateScript(*faults); err != nil {
		return fail(env, "compact", err)
	}
	return c.dialed(ctx, func(k *client.Controller, s settings.Settings) int {
		in := workflows.CompactInputFrom(client.PromptInput(s, c.session, ""), *instructions)
		if len(*faults) > 0 {
			in.Model.SummaryFaults = *faults
		}
		// The summary call's retries (auto_retry_start with the abort-retry
		// hint, and auto_retry_end) print on stderr while the command waits,
		// so a wait on a 503 or a usage limit is not silent.
		p := newPrinter(env.Stderr, false, c.session)
		res, err := k.Compact(ctx, in, p.print)
		p.stopCountdown()
		if err != nil && res.Status == "" {
			if ctx.Err() != nil {
				fmt.Fprintf(env.Stderr, "starter compact: stopped waiting; the compaction keeps running in Temporal (starter state --session %s)\n", c.session)
				return ExitFailed
			}
			return fail(env, "compact", err)
		}
		printOut(env.Stdout, c.json, res, func(io.Writer) { printCompactResult(env, c.session, res) })
		if res.Status != agent.StatusCompleted {
			return ExitFailed
		}
		return ExitOK
	})
}

func printCompactResult(env Env, sessionID string, res workflows.CompactResult) {
	switch {
	case res.Status != agent.StatusCompleted:
		fmt.Fprintf(env.Stderr, "compaction of session %s %s: %s\n", sessionID, res.Status, res.Error)
	case res.NothingToCompact:
		fmt.Fprintf(env.Stdout, "session %s: nothing to compact (the recent messages are the whole context)\n", sessionID)
	case res.Result != nil:
		r := res.Result
		fmt.Fprintf(env.Stdout, "compacted session %s (context was %d tokens): summary in entry %s, messages kept from entry %s\n\n%s\n",
			sessionID, r.TokensBefore, r.EntryID, r.FirstKeptEntryID, r.Summary)
	}
}
