package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
)

// Messages into a running prompt and tool approval: steer, follow-up and
// approve. Like abort, they need a running prompt in the session (exit 2
// with one line otherwise).

const (
	steerUsage    = "starter steer [--session ID] [--json] MESSAGE"
	followUpUsage = "starter follow-up [--session ID] [--json] MESSAGE"
	approveUsage  = "starter approve [--session ID] [--deny] [--reason TEXT] [--for-session] [--json] TOOLCALLID"
)

func runSteer(ctx context.Context, env Env, args []string) int {
	return messageCommand(ctx, env, "steer", steerUsage, args, func(k *client.Controller, id, msg string) error { return k.Steer(ctx, id, msg) })
}

func runFollowUp(ctx context.Context, env Env, args []string) int {
	return messageCommand(ctx, env, "follow-up", followUpUsage, args, func(k *client.Controller, id, msg string) error { return k.FollowUp(ctx, id, msg) })
}

// messageCommand sends MESSAGE (the arguments joined by spaces) with send.
func messageCommand(ctx context.Context, env Env, name, usage string, args []string, send func(*client.Controller, string, string) error) int {
	c := newFlags(name, env)
	if !c.parse(env, args) {
		return ExitUsage
	}
	msg := strings.TrimSpace(strings.Join(c.fs.Args(), " "))
	if msg == "" {
		return fail(env, name, errors.New("missing MESSAGE (usage: "+usage+")"))
	}
	return c.dialed(ctx, func(k *client.Controller, _ settings.Settings) int {
		if err := send(k, c.session, msg); err != nil {
			return fail(env, name, err)
		}
		signal := strings.ReplaceAll(name, "-", "_")
		printResult(env, c.json, map[string]any{"success": true, "command": signal, "sessionId": c.session},
			"sent "+signal+" to session "+c.session)
		return ExitOK
	})
}

func runApprove(ctx context.Context, env Env, args []string) int {
	c := newFlags("approve", env)
	deny := c.fs.Bool("deny", false, "deny the call: the model gets an error result with the reason")
	reason := c.fs.String("reason", "", "why (shown to the model with a denial)")
	forSession := c.fs.Bool("for-session", false, "allow for this session: later calls the same policy rule asks for (same tool; for bash the same program) run without asking, in this prompt and the session's later ones")
	if !c.parse(env, args) {
		return ExitUsage
	}
	if *forSession && *deny {
		return fail(env, "approve", errors.New("--for-session allows calls: it does not go with --deny"))
	}
	if c.fs.NArg() != 1 || strings.TrimSpace(c.fs.Arg(0)) == "" {
		return fail(env, "approve", errors.New("want exactly one TOOLCALLID (usage: "+approveUsage+"; starter state --session S --json lists the calls waiting)"))
	}
	id := c.fs.Arg(0)
	return c.dialed(ctx, func(k *client.Controller, _ settings.Settings) int {
		p := agent.ApproveToolPayload{ToolCallID: id, Approved: !*deny, Reason: *reason}
		if *forSession {
			p.Scope = agent.ApprovalScopeSession
		}
		if err := k.ApproveTool(ctx, c.session, p); err != nil {
			return fail(env, "approve", err)
		}
		word := "approved"
		if *deny {
			word = "denied"
		}
		out := map[string]any{"success": true, "command": agent.UpdateApproveTool, "sessionId": c.session,
			"toolCallId": id, "approved": !*deny}
		text := fmt.Sprintf("%s tool call %s in session %s", word, id, c.session)
		if *forSession {
			out["scope"] = agent.ApprovalScopeSession
			text += ", and its like for the rest of the session"
		}
		printResult(env, c.json, out, text)
		return ExitOK
	})
}
