package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/control"
)

// Messages into a running prompt and tool approval: steer, follow-up and
// approve. Like abort, they need a running prompt in the session (exit 2
// with one line otherwise).

const (
	steerUsage    = "starter steer [--session ID] [--json] MESSAGE"
	followUpUsage = "starter follow-up [--session ID] [--json] MESSAGE"
	approveUsage  = "starter approve [--session ID] [--deny] [--reason TEXT] [--json] TOOLCALLID"
)

var steerCmd = Command{
	Name:    "steer",
	Usage:   steerUsage,
	Summary: "steer the running prompt: after its current tool batch (the calls not started are skipped) it goes on with MESSAGE (signal steer)",
	Run: func(ctx context.Context, env Env, args []string) int {
		return messageCommand(ctx, env, "steer", steerUsage, args, func(k *control.Controller, id, msg string) error { return k.Steer(ctx, id, msg) })
	},
}

var followUpCmd = Command{
	Name:    "follow-up",
	Usage:   followUpUsage,
	Summary: "queue MESSAGE for the running prompt: delivered when it would otherwise end (signal follow_up)",
	Run: func(ctx context.Context, env Env, args []string) int {
		return messageCommand(ctx, env, "follow-up", followUpUsage, args, func(k *control.Controller, id, msg string) error { return k.FollowUp(ctx, id, msg) })
	},
}

var approveCmd = Command{
	Name:    "approve",
	Usage:   approveUsage,
	Summary: "approve (or --deny) a tool call waiting for approval in the running prompt (update approve_tool)",
	Run:     runApprove,
}

// messageCommand sends MESSAGE (the arguments joined by spaces) with send.
func messageCommand(ctx context.Context, env Env, name, usage string, args []string, send func(*control.Controller, string, string) error) int {
	c := newFlags(name, env)
	if !c.parse(env, args) {
		return ExitUsage
	}
	msg := strings.TrimSpace(strings.Join(c.fs.Args(), " "))
	if msg == "" {
		return fail(env, name, errors.New("missing MESSAGE (usage: "+usage+")"))
	}
	k, _, closeFn, ok := c.controller(ctx, env)
	if !ok {
		return ExitUsage
	}
	defer closeFn()
	if err := send(k, c.session, msg); err != nil {
		return fail(env, name, err)
	}
	signal := strings.ReplaceAll(name, "-", "_")
	printResult(env, c.json, map[string]any{"success": true, "command": signal, "sessionId": c.session},
		"sent "+signal+" to session "+c.session)
	return ExitOK
}

func runApprove(ctx context.Context, env Env, args []string) int {
	c := newFlags("approve", env)
	var deny bool
	var reason string
	c.fs.BoolVar(&deny, "deny", false, "deny the call: the model gets an error result with the reason")
	c.fs.StringVar(&reason, "reason", "", "why (shown to the model with a denial)")
	if !c.parse(env, args) {
		return ExitUsage
	}
	if c.fs.NArg() != 1 || strings.TrimSpace(c.fs.Arg(0)) == "" {
		return fail(env, "approve", errors.New("want exactly one TOOLCALLID (usage: "+approveUsage+"; starter state --session S --json lists the calls waiting)"))
	}
	id := c.fs.Arg(0)
	k, _, closeFn, ok := c.controller(ctx, env)
	if !ok {
		return ExitUsage
	}
	defer closeFn()
	if err := k.ApproveTool(ctx, c.session, agent.ApproveToolPayload{ToolCallID: id, Approved: !deny, Reason: reason}); err != nil {
		return fail(env, "approve", err)
	}
	word := "approved"
	if deny {
		word = "denied"
	}
	printResult(env, c.json, map[string]any{"success": true, "command": agent.UpdateApproveTool, "sessionId": c.session,
		"toolCallId": id, "approved": !deny}, fmt.Sprintf("%s tool call %s in session %s", word, id, c.session))
	return ExitOK
}
