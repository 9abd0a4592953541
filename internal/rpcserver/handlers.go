package rpcserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/control"
	"github.com/durableagent/durableagent/rpc"
)

// dispatch runs one checked command. Commands are served in input order;
// only the lasting part of prompt (following its events) and compact run
// in the background, so abort and abort_retry are served while they run.
func (c *conn) dispatch(ctx context.Context, cmd command) {
	switch cmd.typ {
	case rpc.CmdPrompt:
		c.prompt(ctx, cmd)
	case rpc.CmdAbort:
		c.call(ctx, cmd, func(ctx context.Context) (any, error) { return nil, idleOK(c.b.Abort(ctx)) })
	case rpc.CmdAbortRetry:
		c.call(ctx, cmd, func(ctx context.Context) (any, error) { return nil, idleOK(c.b.AbortRetry(ctx)) })
	case rpc.CmdSetAutoRetry:
		c.call(ctx, cmd, func(ctx context.Context) (any, error) { return nil, c.b.SetAutoRetry(ctx, cmd.enabled) })
	case rpc.CmdSetAutoCompaction:
		c.call(ctx, cmd, func(ctx context.Context) (any, error) { return nil, c.b.SetAutoCompaction(ctx, cmd.enabled) })
	case rpc.CmdGetState:
		c.call(ctx, cmd, func(ctx context.Context) (any, error) { return c.b.State(ctx) })
	case rpc.CmdGetMessages:
		c.call(ctx, cmd, func(ctx context.Context) (any, error) {
			msgs, err := c.b.Messages(ctx)
			if msgs == nil {
				msgs = []agent.Message{}
			}
			return rpc.MessagesData{Messages: msgs}, err
		})
	case rpc.CmdGetLastAssistantText:
		c.call(ctx, cmd, func(ctx context.Context) (any, error) {
			msgs, err := c.b.Messages(ctx)
			return rpc.LastAssistantTextData{Text: lastAssistantText(msgs)}, err
		})
	case rpc.CmdCompact:
		c.compact(cmd)
	default:
		// parseCommand knows every type; this is a programming error.
		c.fail(cmd.id, cmd.typ, fmt.Sprintf("command %q has no handler", cmd.typ))
	}
}

// call runs a short backend call under the command timeout and answers.
func (c *conn) call(ctx context.Context, cmd command, fn func(context.Context) (any, error)) {
	ctx, cancel := context.WithTimeout(ctx, c.s.timeout())
	defer cancel()
	data, err := fn(ctx)
	if err != nil {
		c.fail(cmd.id, cmd.typ, errText(err))
		return
	}
	c.respond(cmd.id, cmd.typ, data)
}

// idleOK makes abort and abort_retry without a running prompt a harmless
// no-op (SPEC 5: "outside a wait it is a harmless no-op").
func idleOK(err error) error {
	if errors.Is(err, control.ErrNoRunningPrompt) {
		return nil
	}
	return err
}

// lastAssistantText is the text of the last assistant message that did
// not fail or get aborted, nil if there is none.
func lastAssistantText(msgs []agent.Message) *string {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != agent.RoleAssistant || m.StopReason == agent.StopReasonError || m.StopReason == agent.StopReasonAborted {
			continue
		}
		if t := m.Text(); t != "" {
			return &t
		}
	}
	return nil
}

// follower is a prompt whose events this connection streams.
type follower struct {
	id     string // the prompt command's id
	prompt Prompt
}

// prompt starts a prompt, acknowledges it, and streams its events in the
// background.
func (c *conn) prompt(ctx context.Context, cmd command) {
	c.mu.Lock()
	busy := c.active
	c.mu.Unlock()
	if busy != nil {
		c.fail(cmd.id, cmd.typ, fmt.Sprintf("%v: session %s is running prompt %s (run %s); wait for its prompt_end or abort it",
			control.ErrSessionBusy, c.b.SessionID(), busy.prompt.WorkflowID, busy.prompt.RunID))
		return
	}
	sctx, cancel := context.WithTimeout(ctx, c.s.timeout())
	p, err := c.b.StartPrompt(sctx, cmd.message)
	cancel()
	if err != nil {
		c.fail(cmd.id, cmd.typ, errText(err))
		return
	}
	f := &follower{id: cmd.id, prompt: p}
	c.mu.Lock()
	c.active = f
	c.mu.Unlock()
	// The acknowledgement is written before the follower starts, so it
	// precedes every event of the prompt.
	c.respond(cmd.id, cmd.typ, rpc.PromptData{WorkflowID: p.WorkflowID, RunID: p.RunID})
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.follow(f)
	}()
}

// follow writes the prompt's events until prompt_end. A prompt that did
// not complete, or whose events cannot be followed, gets an error response
// with its id after its last event.
func (c *conn) follow(f *follower) {
	// Following stops when stdout is gone: nobody can read the events.
	ctx, stop := context.WithCancel(c.bg)
	defer stop()
	var last int64
	_, err := c.b.Follow(ctx, f.prompt.RunID, 0, func(e agent.Event) {
		if !control.IsLive(e) {
			if e.Seq <= last {
				return // never twice, whatever the backend does
			}
			last = e.Seq
		}
		if e.Type != agent.EventPromptEnd {
			if c.out.write(e) != nil {
				stop()
			}
			return
		}
		// Idle before the client can read prompt_end, so a prompt sent
		// right after it is not refused as busy.
		c.release(f)
		if e.Status == agent.StatusCompleted {
			_ = c.out.write(e)
			return
		}
		_ = c.out.write(e, errorResponse(f.id, rpc.CmdPrompt, promptFailure(e)))
	})
	if err == nil || ctx.Err() != nil {
		return // ended with prompt_end, or detached, or stdout is gone
	}
	c.release(f)
	c.fail(f.id, rpc.CmdPrompt, fmt.Sprintf("follow events of prompt %s (run %s) after seq %d: %s; the prompt may still be running (get_state)",
		f.prompt.WorkflowID, f.prompt.RunID, last, errText(err)))
}

func (c *conn) release(f *follower) {
	c.mu.Lock()
	if c.active == f {
		c.active = nil
	}
	c.mu.Unlock()
}

// promptFailure is the error text of a prompt_end that is not completed.
func promptFailure(e agent.Event) string {
	if e.ErrorMessage != "" {
		return e.ErrorMessage
	}
	return "prompt " + e.Status
}

// compact runs a manual compaction in the background (it calls the model,
// which takes a while) and answers when it ends.
func (c *conn) compact(cmd command) {
	c.mu.Lock()
	busy := c.active
	c.mu.Unlock()
	if busy != nil {
		c.fail(cmd.id, cmd.typ, fmt.Sprintf("%v: session %s is running prompt %s; compact after its prompt_end",
			control.ErrSessionBusy, c.b.SessionID(), busy.prompt.WorkflowID))
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		res, err := c.b.Compact(c.bg, cmd.customInstructions)
		if c.bg.Err() != nil {
			return // detached: the compaction keeps running in Temporal
		}
		if err != nil {
			c.fail(cmd.id, cmd.typ, errText(err))
			return
		}
		c.respond(cmd.id, cmd.typ, res)
	}()
}
