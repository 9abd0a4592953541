package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
)

const showUsage = "starter show [--session ID] [--json] ENTRY"

// runShow prints one entry of a session whole: the events and history
// carry 160-character previews of tool results (issue 23); the session
// store has the bodies, and the workers read it (SessionRead).
func runShow(ctx context.Context, env Env, args []string) int {
	c := newFlags("show", env)
	if !c.parseArgs(env, args, 1, "one argument: the entry id (usage: "+showUsage+")") {
		return ExitUsage
	}
	return c.dialed(ctx, func(k *client.Controller, _ settings.Settings) int {
		id := c.fs.Arg(0)
		en, ok, err := k.ReadEntry(ctx, c.session, id)
		if errors.Is(err, session.ErrNotFound) {
			return fail(env, "show", fmt.Errorf("no session %q in the workers' session store", c.session))
		}
		if err != nil {
			return fail(env, "show", err)
		}
		if !ok {
			return fail(env, "show", fmt.Errorf("session %s has no entry %q (entry ids are in the events: entryId)", c.session, id))
		}
		printOut(env.Stdout, c.json, en, func(w io.Writer) { printEntry(w, en) })
		return ExitOK
	})
}

// printEntry writes an entry for a person: a message's text whole (an
// assistant's tool calls as ▶ lines), a compaction's summary; any other
// entry as its JSON.
func printEntry(w io.Writer, en session.Entry) {
	switch {
	case en.Type == session.TypeMessage && en.Message != nil:
		m := en.Message
		if m.Role == agent.RoleToolResult {
			mark := "✓"
			if m.IsError {
				mark = "✗"
			}
			fmt.Fprintf(w, "%s %s (%s)\n", mark, m.ToolName, m.ToolCallID)
		}
		if text := m.Text(); text != "" {
			fmt.Fprintln(w, text)
		}
		for _, tc := range m.ToolCalls() {
			fmt.Fprintf(w, "▶ %s %s\n", tc.Name, tc.Arguments)
		}
		if m.ErrorMessage != "" {
			fmt.Fprintf(w, "error: %s\n", m.ErrorMessage)
		}
	case en.Type == session.TypeCompaction:
		fmt.Fprintln(w, en.Summary)
	default:
		b, _ := json.Marshal(en)
		fmt.Fprintln(w, string(b))
	}
}
