package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
)

const queueUsage = "starter queue [--session ID] [--json] | queue edit [--kind steer|follow_up] ID [TEXT] | queue rm ID | queue clear"

func runQueue(ctx context.Context, env Env, args []string) int {
	action := ""
	if len(args) > 0 && slices.Contains([]string{"edit", "rm", "clear"}, args[0]) {
		action, args = args[0], args[1:]
	}
	c := newFlags("queue", env)
	kind := c.fs.String("kind", "", "edit: make the message a steer or a follow_up (it goes last in that queue)")
	if !c.parse(env, args) {
		return ExitUsage
	}
	rest := c.fs.Args()
	p := agent.EditQueuePayload{Action: map[string]string{"edit": agent.QueueEdit, "rm": agent.QueueRemove, "clear": agent.QueueClear}[action], Kind: *kind}
	want := map[string]bool{"": len(rest) == 0, "clear": len(rest) == 0, "rm": len(rest) == 1, "edit": len(rest) > 1 || len(rest) == 1 && *kind != ""}
	if !want[action] {
		return fail(env, "queue", errors.New("wrong arguments (usage: "+queueUsage+")"))
	}
	if len(rest) > 0 {
		p.ID, p.Text = rest[0], strings.TrimSpace(strings.Join(rest[1:], " "))
	}
	return c.dialed(ctx, func(k *client.Controller, _ settings.Settings) int {
		var q, removed []agent.QueuedMessage
		var err error
		if action == "" {
			q, err = k.Queue(ctx, c.session)
		} else {
			var res agent.EditQueueResult
			res, err = k.EditQueue(ctx, c.session, p)
			q, removed = res.Queue, res.Removed
		}
		if err != nil {
			return fail(env, "queue", err)
		}
		var text []string
		for _, m := range removed {
			text = append(text, fmt.Sprintf("removed %s %s: %s", m.ID, m.Kind, m.Text))
		}
		for _, m := range q {
			text = append(text, queuedLine(m))
		}
		if len(q) == 0 {
			text = append(text, "the queue of session "+c.session+" is empty")
		}
		printResult(env, c.json, map[string]any{"sessionId": c.session, "queue": q, "removed": removed}, strings.Join(text, "\n"))
		return ExitOK
	})
}

// queuedLine is one queued message as people read it.
func queuedLine(m agent.QueuedMessage) string {
	s := fmt.Sprintf("%s %-9s %s %s", m.ID, m.Kind, m.SentAt.Local().Format("15:04:05"), m.Text)
	if n := len(m.Images); n > 0 {
		s += fmt.Sprintf(" [%d image(s)]", n)
	}
	return s
}
