package rpcserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/rpc"
)

// commandSpec is a command type: the fields it accepts besides "id" and
// "type", and how it is served.
type commandSpec struct {
	fields []fieldSpec
	// call is a short backend call, answered with its result (conn.call).
	call func(c *conn, ctx context.Context, cmd rpc.Command) (any, error)
	// serve, set instead of call, answers by itself: a prompt, work in
	// the background, a queued message.
	serve func(c *conn, ctx context.Context, cmd rpc.Command)
	// detach: the command leaves the session the followed prompt runs in
	// (it keeps running in Temporal).
	detach bool
}

var (
	messageField = fieldSpec{"message", kindString, true}
	imagesField  = fieldSpec{"images", kindArray, false}
)

// commands are the command types: the terminal agent's RpcCommand (so its
// RpcClient is served unchanged), approve_tool and rewind. A field a type does
// not list is rejected, so a typo such as
// {"type":"set_auto_retry","enable":false} fails loudly instead of doing
// something else. Commands are served in input order; only the lasting
// part of prompt (following its events), compact and bash run in the
// background, so abort, abort_retry, steer and abort_bash are served while
// they run.
var commands = map[string]commandSpec{
	rpc.CmdPrompt:     {fields: []fieldSpec{messageField, imagesField, {"streamingBehavior", kindString, false}}, serve: (*conn).prompt},
	rpc.CmdSteer:      {fields: []fieldSpec{messageField, imagesField}, serve: (*conn).queue},
	rpc.CmdFollowUp:   {fields: []fieldSpec{messageField, imagesField}, serve: (*conn).queue},
	rpc.CmdAbort:      {call: (*conn).abort},
	rpc.CmdClearQueue: {call: (*conn).clearQueue},
	rpc.CmdAbortRetry: {call: func(c *conn, ctx context.Context, _ rpc.Command) (any, error) {
		return nil, client.IdleOK(c.b.AbortRetry(ctx))
	}},
	rpc.CmdSetAutoRetry: {fields: []fieldSpec{{"enabled", kindBool, true}}, call: func(c *conn, ctx context.Context, cmd rpc.Command) (any, error) {
		return nil, c.b.SetAutoRetry(ctx, *cmd.Enabled)
	}},
	rpc.CmdSetAutoCompaction: {fields: []fieldSpec{{"enabled", kindBool, true}}, call: func(c *conn, ctx context.Context, cmd rpc.Command) (any, error) {
		return nil, c.b.SetAutoCompaction(ctx, *cmd.Enabled)
	}},
	rpc.CmdGetState: {call: (*conn).state},
	rpc.CmdGetMessages: {call: func(c *conn, ctx context.Context, _ rpc.Command) (any, error) {
		msgs, err := c.b.Messages(ctx)
		return rpc.MessagesData{Messages: piMessages(msgs)}, err
	}},
	rpc.CmdGetLastAssistantText: {call: func(c *conn, ctx context.Context, _ rpc.Command) (any, error) {
		msgs, err := c.b.Messages(ctx)
		return rpc.LastAssistantTextData{Text: lastAssistantText(msgs)}, err
	}},
	rpc.CmdCompact: {fields: []fieldSpec{{"customInstructions", kindString, false}}, serve: (*conn).compact},
	rpc.CmdApproveTool: {fields: []fieldSpec{{"toolCallId", kindString, true}, {"approved", kindBool, true}, {"reason", kindString, false}, {"scope", kindString, false}},
		call: func(c *conn, ctx context.Context, cmd rpc.Command) (any, error) {
			return nil, c.b.ApproveTool(ctx, agent.ApproveToolPayload{ToolCallID: cmd.ToolCallID, Approved: *cmd.Approved, Reason: cmd.Reason, Scope: cmd.Scope})
		}},
	rpc.CmdRewind: {fields: []fieldSpec{{"to", kindNumber, true}, {"force", kindBool, false}},
		call: func(c *conn, ctx context.Context, cmd rpc.Command) (any, error) {
			cps, err := c.b.Checkpoints(ctx)
			if err != nil {
				return nil, err
			}
			undo, err := cps.Rewind(ctx, cmd.To, cmd.Force)
			return rpc.RewindData{Undo: undo}, err
		}},
	rpc.CmdGetAvailableThinkingLevels: {call: func(*conn, context.Context, rpc.Command) (any, error) {
		return rpc.ThinkingLevelsData{Levels: llm.ThinkingLevels}, nil
	}},
	rpc.CmdGetCommands: {call: func(*conn, context.Context, rpc.Command) (any, error) {
		return rpc.CommandsData{Commands: []any{}}, nil
	}},
	rpc.CmdExportHTML: {fields: []fieldSpec{{"outputPath", kindString, false}}, call: func(*conn, context.Context, rpc.Command) (any, error) {
		return nil, errors.New("export_html is not supported: this agent renders no HTML; read the conversation with get_messages or `starter session export`")
	}},
	rpc.CmdNewSession: {fields: []fieldSpec{{"parentSession", kindString, false}}, detach: true,
		call: func(c *conn, ctx context.Context, _ rpc.Command) (any, error) {
			return rpc.CancelledData{}, c.b.NewSession(ctx)
		}},
	rpc.CmdSwitchSession: {fields: []fieldSpec{{"sessionPath", kindString, true}}, detach: true,
		call: func(c *conn, ctx context.Context, cmd rpc.Command) (any, error) {
			return rpc.CancelledData{}, c.b.SwitchSession(ctx, cmd.SessionPath)
		}},
	rpc.CmdFork: {fields: []fieldSpec{{"entryId", kindString, true}}, detach: true,
		call: func(c *conn, ctx context.Context, cmd rpc.Command) (any, error) {
			text, err := c.b.Fork(ctx, cmd.EntryID, false)
			return rpc.ForkData{Text: text}, err
		}},
	rpc.CmdClone:              {detach: true, call: (*conn).clone},
	rpc.CmdGetForkMessages:    {call: (*conn).forkMessages},
	rpc.CmdSetSessionName:     {fields: []fieldSpec{{"name", kindString, true}}, call: (*conn).setSessionName},
	rpc.CmdSetModel:           {fields: []fieldSpec{{"provider", kindString, true}, {"modelId", kindString, true}}, call: (*conn).setModel},
	rpc.CmdCycleModel:         {call: (*conn).cycleModel},
	rpc.CmdGetAvailableModels: {call: (*conn).models},
	rpc.CmdSetThinkingLevel: {fields: []fieldSpec{{"level", kindString, true}}, call: func(c *conn, ctx context.Context, cmd rpc.Command) (any, error) {
		return nil, c.setThinkingLevel(ctx, cmd.Level)
	}},
	rpc.CmdCycleThinkingLevel: {call: func(c *conn, ctx context.Context, _ rpc.Command) (any, error) {
		info, err := c.b.Info(ctx)
		if err != nil {
			return nil, err
		}
		next := nextOf(llm.ThinkingLevels, info.ThinkingLevel)
		return rpc.ThinkingLevelData{Level: next}, c.setThinkingLevel(ctx, next)
	}},
	rpc.CmdSetSteeringMode: {fields: []fieldSpec{{"mode", kindString, true}}, call: setQueueMode},
	rpc.CmdSetFollowUpMode: {fields: []fieldSpec{{"mode", kindString, true}}, call: setQueueMode},
	rpc.CmdGetSessionStats: {call: (*conn).sessionStats},
	rpc.CmdBash:            {fields: []fieldSpec{{"command", kindString, true}, {"excludeFromContext", kindBool, false}}, serve: (*conn).bash},
	rpc.CmdAbortBash: {call: func(c *conn, ctx context.Context, _ rpc.Command) (any, error) {
		return nil, c.b.AbortBash(ctx)
	}},
	rpc.CmdGetEntries: {fields: []fieldSpec{{"since", kindString, false}}, call: (*conn).entries},
	rpc.CmdGetTree:    {call: (*conn).tree},
}

// dispatch serves one checked command.
func (c *conn) dispatch(ctx context.Context, cmd rpc.Command) {
	spec := commands[cmd.Type]
	if spec.detach {
		c.detach()
	}
	if spec.serve != nil {
		spec.serve(c, ctx, cmd)
		return
	}
	c.call(ctx, cmd, func(ctx context.Context) (any, error) { return spec.call(c, ctx, cmd) })
}

// clone is clone: a new session with this one's entries up to its leaf.
func (c *conn) clone(ctx context.Context, _ rpc.Command) (any, error) {
	sess, err := c.b.LoadSession(ctx, c.b.SessionID())
	if err != nil {
		return nil, err
	}
	if sess == nil || sess.LeafID() == "" {
		return nil, errors.New("cannot clone session: it has no entries yet")
	}
	_, err = c.b.Fork(ctx, sess.LeafID(), true)
	return rpc.CancelledData{}, err
}

// forkMessages is get_fork_messages: the user messages fork may start from.
func (c *conn) forkMessages(ctx context.Context, _ rpc.Command) (any, error) {
	sess, err := c.b.LoadSession(ctx, c.b.SessionID())
	out := rpc.ForkMessagesData{Messages: []rpc.ForkMessage{}}
	if sess == nil || err != nil {
		return out, err
	}
	for _, e := range sess.Entries {
		if e.Message != nil && e.Message.Role == agent.RoleUser && e.Message.Text() != "" {
			out.Messages = append(out.Messages, rpc.ForkMessage{EntryID: e.ID, Text: e.Message.Text()})
		}
	}
	return out, nil
}

// setSessionName is set_session_name; it says so (session_info_changed,
// before the response).
func (c *conn) setSessionName(ctx context.Context, cmd rpc.Command) (any, error) {
	if err := c.b.SetSessionName(ctx, cmd.Name); err != nil {
		return nil, err
	}
	_ = c.out.write(rpc.SessionInfoEvent{Type: rpc.EventSessionInfoChanged, Name: cmd.Name})
	return nil, nil
}

// setQueueMode is set_steering_mode and set_follow_up_mode.
func setQueueMode(c *conn, ctx context.Context, cmd rpc.Command) (any, error) {
	return nil, c.b.SetQueueMode(ctx, cmd.Type == rpc.CmdSetSteeringMode, cmd.Mode)
}

// nextOf is the item after cur in list, wrapping (the first when cur is
// not in it).
func nextOf[T comparable](list []T, cur T) T {
	return list[(slices.Index(list, cur)+1)%len(list)]
}

// cycleModel moves to the next available model (null with one).
func (c *conn) cycleModel(ctx context.Context, _ rpc.Command) (any, error) {
	models := c.b.Models()
	if len(models) < 2 {
		return json.RawMessage("null"), nil // "data":null
	}
	info, err := c.b.Info(ctx)
	if err != nil {
		return nil, err
	}
	next := nextOf(models, info.Model)
	m, err := c.setModel(ctx, rpc.Command{Provider: next.Provider, ModelID: next.Name})
	return rpc.CycleModelData{Model: m.(rpc.Model), ThinkingLevel: info.ThinkingLevel}, err
}

// call runs a short backend call under the command timeout and answers.
func (c *conn) call(ctx context.Context, cmd rpc.Command, fn func(context.Context) (any, error)) {
	ctx, cancel := context.WithTimeout(ctx, c.s.timeout())
	defer cancel()
	data, err := fn(ctx)
	c.respond(cmd, data, err)
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

// state is get_state: the workflow's state with the terminal agent's
// RpcSessionState fields on top.
func (c *conn) state(ctx context.Context, _ rpc.Command) (any, error) {
	st, err := c.b.State(ctx)
	if err != nil {
		return nil, err
	}
	info, err := c.b.Info(ctx)
	if err != nil {
		return nil, err
	}
	m := modelObject(c.b.Settings(), info.Model)
	// A running prompt's queue modes are its own; else the next one's.
	out := rpc.SessionState{State: st, Model: &m, ThinkingLevel: info.ThinkingLevel, SessionFile: info.File, SessionName: info.Name,
		SteeringMode: cmp.Or(st.SteeringMode, info.SteeringMode), FollowUpMode: cmp.Or(st.FollowUpMode, info.FollowUpMode)}
	c.mu.Lock()
	out.PendingMessageCount += len(c.idle.msgs)
	c.mu.Unlock()
	return out, nil
}

// follower is a prompt whose events this connection streams.
type follower struct {
	id     string // the prompt command's id
	prompt client.Prompt
	// stop ends the following (detach); done is closed when it ended.
	stop context.CancelFunc
	done chan struct{}
}

func (c *conn) activeFollower() *follower {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.active
}

// detach stops following (or watching) the running prompt (new_session,
// switch_session, fork): it keeps running in Temporal.
func (c *conn) detach() {
	c.mu.Lock()
	c.stopWatch()
	c.mu.Unlock()
	f := c.activeFollower()
	if f == nil {
		return
	}
	f.stop()
	<-f.done
	c.release(f)
	c.detached(f)
}

// prompt starts a prompt, acknowledges it, and streams its events in the
// background. While one runs, a prompt with streamingBehavior steer or
// followUp is queued into it; without, it is refused as "session busy".
func (c *conn) prompt(ctx context.Context, cmd rpc.Command) {
	behavior := cmd.StreamingBehavior
	if busy := c.activeFollower(); busy != nil && behavior != "" {
		c.queue(ctx, cmd)
		return
	} else if busy != nil {
		c.fail(cmd.ID, cmd.Type, fmt.Sprintf("%v: session %s is running prompt %s (run %s); wait for its prompt_end, abort it, or send the prompt with streamingBehavior steer or followUp",
			client.ErrSessionBusy, c.b.SessionID(), busy.prompt.WorkflowID, busy.prompt.RunID))
		return
	}
	sctx, cancel := context.WithTimeout(ctx, c.s.timeout())
	p, err := c.b.StartPrompt(sctx, cmd.Message, cmd.Images...)
	cancel()
	if errors.Is(err, client.ErrSessionBusy) && behavior != "" {
		// Another client's prompt runs: queue into it.
		c.queue(ctx, cmd)
		return
	}
	if err != nil {
		c.respond(cmd, nil, err)
		return
	}
	fctx, stop := context.WithCancel(c.bg)
	f := &follower{id: cmd.ID, prompt: p, stop: stop, done: make(chan struct{})}
	c.mu.Lock()
	c.active = f
	c.mu.Unlock()
	// The acknowledgement is written before the follower starts, so it
	// precedes every event of the prompt.
	c.respond(cmd, rpc.PromptData{Disposition: rpc.DispositionStarted, WorkflowID: p.WorkflowID, RunID: p.RunID}, nil)
	c.deliverQueue(ctx)
	id := c.b.SessionID()
	comp := newCompleter(fctx, func(ctx context.Context) (*session.Session, error) { return c.b.LoadSession(ctx, id) })
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(f.done)
		defer stop()
		c.follow(fctx, f, comp)
	}()
}

// follow writes the prompt's events, completed (completer), until
// prompt_end. The terminal agent reports a prompt that failed after its
// acknowledgement through events only, and so does this: agent_end
// (stopReason, errorMessage) and prompt_end (status, errorMessage). Only
// when the events cannot be followed does an error response with the
// prompt's id follow its last event.
func (c *conn) follow(ctx context.Context, f *follower, comp *completer) {
	var last int64
	pi := &piLines{started: map[string]time.Time{}}
	frames := newFramer(c.s.Protocol)
	_, err := c.b.Follow(ctx, f.prompt.RunID, 0, func(e agent.Event) {
		if !live.IsLive(e) {
			last = e.Seq // Follow delivers each event once, in order
		}
		if e.Type == agent.EventQueueChanged {
			c.queueAfter(ctx, e) // written as pi's queue_update
			return
		}
		if e.Type == agent.EventPromptEnd {
			// Idle before the client can read prompt_end, so a prompt sent
			// right after it is not refused as busy.
			c.release(f)
		}
		for _, l := range frames.frame(comp.complete(e)) {
			if ce, ok := l.(agent.Event); ok {
				l = pi.line(ce)
			}
			if c.out.write(l) != nil {
				f.stop() // stdout is gone: nobody can read the events
				return
			}
		}
		c.queueAfter(ctx, e)
		if e.Type == agent.EventPromptEnd {
			c.settled(e.Status == agent.StatusAborted)
		}
	})
	if err == nil || ctx.Err() != nil {
		return // ended with prompt_end, or detached, or stdout is gone
	}
	c.release(f)
	if errors.Is(err, client.ErrPromptClosed) {
		// Terminated, timed out, ...: Temporal closed the prompt without
		// its prompt_end; say so, not that it may still run.
		c.fail(f.id, rpc.CmdPrompt, fmt.Sprintf("%s; its events end at seq %d", line.First(err.Error()), last))
		c.settled(false)
		return
	}
	c.fail(f.id, rpc.CmdPrompt, fmt.Sprintf("follow events of prompt %s (run %s) after seq %d: %s; the prompt may still be running (get_state)",
		f.prompt.WorkflowID, f.prompt.RunID, last, line.First(err.Error())))
}

func (c *conn) release(f *follower) {
	c.mu.Lock()
	if c.active == f {
		c.active = nil
	}
	c.mu.Unlock()
}

// compact runs a manual compaction in the background (it calls the model,
// which takes a while) and answers with its CompactionResult; nothing to
// compact is an error, as for the terminal agent. The summary call's
// retries are written as auto_retry_start / auto_retry_end events before
// the response, as a prompt's are, so a client shows the wait and can
// send abort_retry.
func (c *conn) compact(_ context.Context, cmd rpc.Command) {
	c.background(cmd, func(ctx context.Context) (any, error) {
		_ = c.out.write(manualStart())
		res, err := c.b.Compact(ctx, cmd.CustomInstructions, func(e agent.Event) {
			if ctx.Err() == nil {
				_ = c.out.write(summaryRetryLine(e))
			}
		})
		switch {
		case err != nil:
			_ = c.out.write(manualEnd(nil, line.First(err.Error())))
			return nil, err
		case res.NothingToCompact || res.Result == nil:
			_ = c.out.write(manualEnd(nil, rpc.NothingToCompactError))
			return nil, client.TerminalError(rpc.NothingToCompactError)
		}
		_ = c.out.write(manualEnd(res.Result, ""))
		return res.Result, nil
	})
}

// bash runs a user command in the background (abort_bash is served while
// it runs) and answers with its BashResult. Its output goes out as
// bash_execution_update as the live output brings it; what a short
// command printed before any of it was read goes out before the
// response, as pi sends it.
func (c *conn) bash(_ context.Context, cmd rpc.Command) {
	c.background(cmd, func(ctx context.Context) (any, error) {
		var mu sync.Mutex
		var sent strings.Builder
		update := func(delta string) {
			mu.Lock()
			defer mu.Unlock()
			sent.WriteString(delta)
			_ = c.out.write(rpc.BashUpdateEvent{Type: rpc.EventBashExecutionUpdate, ID: cmd.ID, Delta: delta})
		}
		m, err := c.b.Bash(ctx, cmd.Command, client.BashOptions{ExcludeFromContext: cmd.ExcludeFromContext, OnOutput: update})
		mu.Lock()
		rest, ok := strings.CutPrefix(m.Output, sent.String())
		mu.Unlock()
		if ok && rest != "" && err == nil {
			update(rest)
		}
		return rpc.BashResult{Output: m.Output, ExitCode: m.ExitCode, Cancelled: m.Cancelled, Truncated: m.Truncated, FullOutputPath: m.FullOutputPath}, err
	})
}

// background runs fn after the prompt this connection follows (refusing
// when one runs) and answers when it ends.
func (c *conn) background(cmd rpc.Command, fn func(context.Context) (any, error)) {
	if busy := c.activeFollower(); busy != nil {
		c.fail(cmd.ID, cmd.Type, fmt.Sprintf("%v: session %s is running prompt %s; %s after its prompt_end",
			client.ErrSessionBusy, c.b.SessionID(), busy.prompt.WorkflowID, cmd.Type))
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		data, err := fn(c.bg)
		if c.bg.Err() == nil { // else detached: the work keeps running in Temporal
			c.respond(cmd, data, err)
		}
	}()
}

// setThinkingLevel sets the level and says so (pi 1.6's
// thinking_level_changed, before the response).
func (c *conn) setThinkingLevel(ctx context.Context, level string) error {
	if err := c.b.SetThinkingLevel(ctx, level); err != nil {
		return err
	}
	_ = c.out.write(rpc.ThinkingLevelEvent{Type: rpc.EventThinkingLevelChanged, ThinkingLevelData: rpc.ThinkingLevelData{Level: level}})
	return nil
}
