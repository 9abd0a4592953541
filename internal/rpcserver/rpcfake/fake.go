// Package rpcfake is an in-memory client.Backend for tests of RPC mode,
// the Go RPC client and the terminal UI, without Temporal. It is the only
// fake of the session besides the scripted model.
//
// A test (or a Script) plays the workflow: it emits a prompt's events with
// Run.Emit and reads the signals the client sent from Run.Signals. The
// fake keeps the State the way the workflow does (isStreaming between
// agent_start and agent_end, isRetrying between auto_retry_start and
// auto_retry_end, ...), refuses a second prompt while one runs, and
// answers signals without a running prompt with client.ErrNoRunningPrompt,
// as the real backend does.
package rpcfake

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/workflows"
)

// Script plays one prompt: it runs in its own goroutine when the prompt
// starts and must end it with a prompt_end event (or leave that to the
// test).
type Script func(r *Run)

// Backend is the fake. Create it with New.
type Backend struct {
	// Script plays every prompt (nil: the test emits the events itself).
	Script Script
	// CompactFunc answers compact (nil: nothing to compact); it passes
	// the summary call's retry events to onRetry, as the Compact workflow
	// would emit them.
	CompactFunc func(ctx context.Context, instructions string, onRetry func(agent.Event)) (workflows.CompactResult, error)
	// StateHook, when set, runs at the start of State: tests block it to
	// make a command time out.
	StateHook func(ctx context.Context) error

	mu       sync.Mutex
	session  string
	state    agent.State
	messages []agent.Message
	runs     []*Run
	calls    []string
	// compactSignals gets abort and abort_retry while Compact runs (the
	// Compact workflow runs under the session's workflow id).
	compactSignals chan string
	started        chan *Run
}

var _ client.Backend = (*Backend)(nil)

// New returns an idle fake for session id with auto-retry and
// auto-compaction enabled.
func New(sessionID string) *Backend {
	return &Backend{
		session: sessionID,
		state: agent.State{SessionID: sessionID, Model: "scripted-1", Provider: "scripted", Status: client.StatusIdle,
			AutoRetryEnabled: true, AutoCompactionEnabled: true},
		started: make(chan *Run, 16),
	}
}

// Run is one prompt of the fake.
type Run struct {
	b       *Backend
	ID      string
	Message string

	mu      sync.Mutex
	events  []agent.Event
	changed chan struct{} // closed and replaced at every Emit
	signals chan string
}

// Emit appends an event to the prompt's log, numbering it, and updates the
// session state the way the workflow does. The state changes before any
// follower can see the event, as in the workflow, where the event and the
// state it implies are one workflow task (a prompt sent on prompt_end
// finds the session idle).
func (r *Run) Emit(e agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Seq = int64(len(r.events)) + 1
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	r.b.apply(e) // lock order: r.mu, then b.mu
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
}

// Signals delivers abort, abort_retry and set_auto_retry as the client
// sends them ("set_auto_retry:true" / ":false").
func (r *Run) Signals() <-chan string { return r.signals }

// Events returns a copy of the events emitted so far.
func (r *Run) Events() []agent.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]agent.Event(nil), r.events...)
}

func (b *Backend) apply(e agent.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := &b.state
	st.LastSeq = e.Seq
	switch e.Type {
	case agent.EventAgentStart:
		st.IsStreaming = true
	case agent.EventMessageEnd:
		if e.Message != nil && !b.stored(*e.Message) {
			b.messages = append(b.messages, *e.Message)
			st.MessageCount = len(b.messages)
		}
	case agent.EventAgentEnd:
		st.IsStreaming = false
	case agent.EventAutoRetryStart:
		st.IsRetrying, st.RetryAttempt = true, e.Attempt
	case agent.EventAutoRetryEnd:
		st.IsRetrying, st.RetryAttempt = false, 0
	case agent.EventAutoCompactionStart:
		st.IsCompacting = true
	case agent.EventAutoCompactionEnd:
		st.IsCompacting = false
	case agent.EventToolApprovalRequest:
		st.PendingApprovals = append(st.PendingApprovals, agent.PendingApproval{ToolCallID: e.ToolCallID, ToolName: e.ToolName, Args: e.Args})
	case agent.EventToolExecutionStart:
		st.PendingApprovals = dropApproval(st.PendingApprovals, e.ToolCallID)
	case agent.EventPromptEnd:
		st.Status, st.IsStreaming, st.IsRetrying, st.RetryAttempt = e.Status, false, false, 0
		st.PendingApprovals, st.PendingMessageCount = nil, 0
	}
	if e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleUser && st.PendingMessageCount > 0 {
		st.PendingMessageCount-- // a queued message delivered
	}
}

// stored reports whether msg is a user message already stored: the
// prompt's own, stored by StartPrompt, whose message_end a test emits
// (with the Timestamp StartPrompt gave it) as the workflow does.
func (b *Backend) stored(msg agent.Message) bool {
	if msg.Role != agent.RoleUser || msg.Timestamp == 0 {
		return false
	}
	for _, m := range b.messages {
		if m.Role == agent.RoleUser && m.Timestamp == msg.Timestamp && m.Text() == msg.Text() {
			return true
		}
	}
	return false
}

func dropApproval(ps []agent.PendingApproval, id string) []agent.PendingApproval {
	var out []agent.PendingApproval
	for _, p := range ps {
		if p.ToolCallID != id {
			out = append(out, p)
		}
	}
	return out
}

// SessionID implements client.Backend.
func (b *Backend) SessionID() string { return b.session }

// StartPrompt implements client.Backend.
func (b *Backend) StartPrompt(ctx context.Context, message string) (client.Prompt, error) {
	b.mu.Lock()
	b.calls = append(b.calls, "prompt:"+message)
	if b.state.Status == agent.StatusRunning {
		b.mu.Unlock()
		return client.Prompt{}, fmt.Errorf("%w: session %s is running a prompt", client.ErrSessionBusy, b.session)
	}
	r := &Run{b: b, ID: fmt.Sprintf("run-%d", len(b.runs)+1), Message: message,
		changed: make(chan struct{}), signals: make(chan string, 16)}
	b.runs = append(b.runs, r)
	b.state.Status, b.state.LastSeq = agent.StatusRunning, 0
	user := agent.TextMessage(agent.RoleUser, message)
	user.Timestamp = time.Now().UnixMilli()
	b.messages = append(b.messages, user)
	b.state.MessageCount = len(b.messages)
	script := b.Script
	b.mu.Unlock()
	select {
	case b.started <- r:
	default: // nobody watches Started; keep going
	}
	if script != nil {
		go script(r)
	}
	return client.Prompt{WorkflowID: "session-" + b.session, RunID: r.ID}, nil
}

// Started returns the next prompt started (of the last 16 not yet taken), waiting for it until ctx ends.
func (b *Backend) Started(ctx context.Context) (*Run, error) {
	select {
	case r := <-b.started:
		return r, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("rpcfake: no prompt started: %w", ctx.Err())
	}
}

// Follow implements client.Backend: it delivers events as they are
// emitted, without polling.
func (b *Backend) Follow(ctx context.Context, runID string, after int64, fn func(agent.Event)) (agent.Event, error) {
	r := b.run(runID)
	if r == nil {
		return agent.Event{}, fmt.Errorf("%w: run %s", client.ErrNoPrompt, runID)
	}
	for {
		r.mu.Lock()
		evs := append([]agent.Event(nil), r.events[min(int(after), len(r.events)):]...)
		changed := r.changed
		r.mu.Unlock()
		for _, e := range evs {
			after = e.Seq
			fn(e)
			if e.Type == agent.EventPromptEnd {
				return e, nil
			}
		}
		select {
		case <-ctx.Done():
			return agent.Event{}, ctx.Err()
		case <-changed:
		}
	}
}

func (b *Backend) run(id string) *Run {
	b.mu.Lock()
	defer b.mu.Unlock()
	if id == "" && len(b.runs) > 0 {
		return b.runs[len(b.runs)-1] // the latest, as the events query does
	}
	for _, r := range b.runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// running is the running prompt, nil when idle.
func (b *Backend) running() *Run {
	if b.state.Status != agent.StatusRunning || len(b.runs) == 0 {
		return nil
	}
	return b.runs[len(b.runs)-1]
}

func (b *Backend) signal(name string) error {
	b.mu.Lock()
	b.calls = append(b.calls, name)
	r, compacting := b.running(), b.compactSignals
	b.mu.Unlock()
	switch {
	case r != nil:
		r.signals <- name
	case compacting != nil:
		compacting <- name
	default:
		return fmt.Errorf("%w in session %s", client.ErrNoRunningPrompt, b.session)
	}
	return nil
}

// CompactSignals is where abort and abort_retry go while a compaction
// runs (nil when none does): CompactFunc reads them.
func (b *Backend) CompactSignals() <-chan string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.compactSignals
}

// Abort implements client.Backend.
func (b *Backend) Abort(ctx context.Context) error { return b.signal(agent.SignalAbort) }

// AbortRetry implements client.Backend.
func (b *Backend) AbortRetry(ctx context.Context) error { return b.signal(agent.SignalAbortRetry) }

// Steer implements client.Backend: it counts the message as pending
// (a user message_end the test emits delivers it).
func (b *Backend) Steer(ctx context.Context, message string) error {
	return b.queue(agent.SignalSteer, message)
}

// FollowUp implements client.Backend, as Steer.
func (b *Backend) FollowUp(ctx context.Context, message string) error {
	return b.queue(agent.SignalFollowUp, message)
}

func (b *Backend) queue(name, message string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, name+":"+message)
	if b.running() == nil {
		return fmt.Errorf("%w in session %s", client.ErrNoRunningPrompt, b.session)
	}
	b.state.PendingMessageCount++
	return nil
}

// ApproveTool implements client.Backend: it decides a call of the
// state's pending approvals (from tool_approval_request events) and, like
// the workflow's validator, rejects any other id. The decided call leaves
// the pending list; the test emits what follows.
func (b *Backend) ApproveTool(ctx context.Context, p agent.ApproveToolPayload) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	call := fmt.Sprintf("approve_tool:%s:%t:%s", p.ToolCallID, p.Approved, p.Reason)
	if p.Scope != "" {
		call += ":scope=" + p.Scope
	}
	b.calls = append(b.calls, call)
	if b.running() == nil {
		return fmt.Errorf("%w in session %s", client.ErrNoRunningPrompt, b.session)
	}
	for _, a := range b.state.PendingApprovals {
		if a.ToolCallID == p.ToolCallID {
			b.state.PendingApprovals = dropApproval(b.state.PendingApprovals, p.ToolCallID)
			return nil
		}
	}
	return fmt.Errorf("approve_tool %s in session %s: tool call %s is not waiting for approval", p.ToolCallID, b.session, p.ToolCallID)
}

// SetAutoRetry implements client.Backend: it "persists" the setting in
// the state and tells the running prompt.
func (b *Backend) SetAutoRetry(ctx context.Context, enabled bool) error {
	b.mu.Lock()
	b.state.AutoRetryEnabled = enabled
	b.calls = append(b.calls, fmt.Sprintf("set_auto_retry:%t", enabled))
	r := b.running()
	b.mu.Unlock()
	if r != nil {
		r.signals <- fmt.Sprintf("set_auto_retry:%t", enabled)
	}
	return nil
}

// SetAutoCompaction implements client.Backend.
func (b *Backend) SetAutoCompaction(ctx context.Context, enabled bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state.AutoCompactionEnabled = enabled
	b.calls = append(b.calls, fmt.Sprintf("set_auto_compaction:%t", enabled))
	return nil
}

// State implements client.Backend.
func (b *Backend) State(ctx context.Context) (agent.State, error) {
	if b.StateHook != nil {
		if err := b.StateHook(ctx); err != nil {
			return agent.State{}, err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.state
	if st.Status != agent.StatusRunning {
		st.Status = client.StatusIdle
	}
	return st, nil
}

// Messages implements client.Backend.
func (b *Backend) Messages(ctx context.Context) ([]agent.Message, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]agent.Message(nil), b.messages...), nil
}

// Compact implements client.Backend.
func (b *Backend) Compact(ctx context.Context, instructions string, onRetry func(agent.Event)) (workflows.CompactResult, error) {
	b.mu.Lock()
	b.calls = append(b.calls, "compact:"+instructions)
	fn := b.CompactFunc
	running := b.running() != nil
	if !running && fn != nil {
		b.compactSignals = make(chan string, 4)
	}
	b.mu.Unlock()
	if running {
		return workflows.CompactResult{}, fmt.Errorf("%w: session %s is running a prompt", client.ErrSessionBusy, b.session)
	}
	if fn == nil {
		return workflows.CompactResult{NothingToCompact: true}, nil
	}
	defer func() {
		b.mu.Lock()
		b.compactSignals = nil
		b.mu.Unlock()
	}()
	return fn(ctx, instructions, onRetry)
}

// Calls lists the calls made so far ("prompt:<message>", "abort",
// "abort_retry", "set_auto_retry:<bool>", "steer:<message>",
// "follow_up:<message>", "approve_tool:<id>:<approved>:<reason>", ...), in
// order.
func (b *Backend) Calls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.calls...)
}
