package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// ErrExited: the RPC process is gone (it exited, or Close ended it).
var ErrExited = errors.New("rpc process exited")

// CommandError is an error response to a command.
type CommandError struct {
	Command string
	Message string
}

func (e *CommandError) Error() string { return "rpc " + e.Command + ": " + e.Message }

// Client runs `starter rpc` (or another command line speaking the
// protocol) and talks to it. Its methods are safe for concurrent use.
//
// Events are delivered to OnEvent listeners in order, on a goroutine of
// their own, so a listener may call the client (for example AbortRetry on
// auto_retry_start). Unlike the original TypeScript client, auto_retry_*
// and compaction_* events reach the listeners like every other event.
type Client struct {
	opts    options
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *tail
	writeMu sync.Mutex
	traceMu sync.Mutex

	mu        sync.Mutex
	nextID    uint64
	pending   map[string]*pendingRequest
	listeners []listener
	nextLis   int
	current   *promptWait // the prompt whose prompt_end is awaited
	last      *promptWait // the last prompt that ended
	exitErr   error

	queue *queue
	done  chan struct{} // closed when the process has exited
}

type pendingRequest struct {
	ch chan Response
	// acked runs on the reading goroutine when the command succeeds,
	// before the caller sees the response and before any later line is
	// read.
	acked func(Response)
}

type listener struct {
	id int
	fn func(agent.Event)
}

// promptWait is a prompt acknowledged by the server, until its end.
type promptWait struct {
	id   string
	done chan struct{}
	end  agent.Event
	err  error
}

// Start starts the RPC process; by default `starter rpc`, which serves a
// new session in the process's working directory (see the options). It
// returns once the process runs; a process that cannot serve (Temporal
// unreachable, bad flags, a session that works in another directory)
// exits, and the first request returns its error (ErrExited with the end
// of its stderr).
func Start(opts ...Option) (*Client, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	path, args := o.argv()
	cmd := exec.Command(path, args...)
	cmd.Env, cmd.Dir = o.env, o.dir
	c := &Client{opts: o, cmd: cmd, stderr: &tail{max: 4096}, pending: map[string]*pendingRequest{},
		queue: newQueue(), done: make(chan struct{})}
	if o.stderr != nil {
		cmd.Stderr = io.MultiWriter(c.stderr, o.stderr)
	} else {
		cmd.Stderr = c.stderr
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("rpc: start %s: %w", path, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("rpc: start %s: %w", path, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("rpc: start %s: %w", path, err)
	}
	c.stdin = stdin
	go c.read(stdout)
	go c.dispatch()
	return c, nil
}

// OnEvent adds a listener for every event and returns a function that
// removes it. Listeners run one event at a time, in stream order.
func (c *Client) OnEvent(fn func(agent.Event)) (remove func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextLis++
	id := c.nextLis
	c.listeners = append(c.listeners, listener{id, fn})
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, l := range c.listeners {
			if l.id == id {
				c.listeners = append(c.listeners[:i:i], c.listeners[i+1:]...)
				return
			}
		}
	}
}

// Prompt sends a prompt and returns when the server acknowledged it (its
// workflow runs); its events follow. WaitForIdle waits for its end.
func (c *Client) Prompt(ctx context.Context, message string) (PromptData, error) {
	var d PromptData
	r, err := c.request(ctx, Command{Type: CmdPrompt, Message: message}, func(r Response) {
		w := &promptWait{id: r.ID, done: make(chan struct{})}
		c.mu.Lock()
		c.current = w
		c.mu.Unlock()
	})
	if err != nil {
		return d, err
	}
	return d, decodeData(r, &d)
}

// WaitForIdle waits until the last prompt sent has ended and returns its
// prompt_end event: the final end, never an intermediate agent_end of a
// retry chain (the workflow emits prompt_end once, after its chain ended).
// A prompt that failed or was aborted is not an error here: read
// Status and ErrorMessage. The error is non-nil when the end could not be
// seen: ctx ended, the process exited, or the server reported that it
// could not follow the prompt. With no prompt sent it returns at once.
func (c *Client) WaitForIdle(ctx context.Context) (agent.Event, error) {
	c.mu.Lock()
	w := c.current
	if w == nil {
		w = c.last
	}
	c.mu.Unlock()
	if w == nil {
		return agent.Event{}, nil
	}
	select {
	case <-w.done:
		return w.end, w.err
	case <-ctx.Done():
		return agent.Event{}, fmt.Errorf("rpc: wait for prompt %s to end: %w", w.id, ctx.Err())
	}
}

// Abort aborts the running prompt: its retry first, then its model call.
func (c *Client) Abort(ctx context.Context) error {
	_, err := c.request(ctx, Command{Type: CmdAbort}, nil)
	return err
}

// AbortRetry cancels a pending retry; outside a backoff it does nothing.
// The outcome comes as auto_retry_end {success:false, finalError:"Retry
// cancelled"}.
func (c *Client) AbortRetry(ctx context.Context) error {
	_, err := c.request(ctx, Command{Type: CmdAbortRetry}, nil)
	return err
}

// SetAutoRetry persists retry.enabled and tells the running prompt.
func (c *Client) SetAutoRetry(ctx context.Context, enabled bool) error {
	_, err := c.request(ctx, Command{Type: CmdSetAutoRetry, Enabled: &enabled}, nil)
	return err
}

// SetAutoCompaction persists compaction.enabled.
func (c *Client) SetAutoCompaction(ctx context.Context, enabled bool) error {
	_, err := c.request(ctx, Command{Type: CmdSetAutoCompaction, Enabled: &enabled}, nil)
	return err
}

// GetState returns the session state (the terminal agent's
// RpcSessionState plus autoRetryEnabled, isRetrying, retryAttempt, ...).
func (c *Client) GetState(ctx context.Context) (SessionState, error) {
	var st SessionState
	r, err := c.request(ctx, Command{Type: CmdGetState}, nil)
	if err != nil {
		return st, err
	}
	return st, decodeData(r, &st)
}

// GetMessages returns the session's messages (its run context).
func (c *Client) GetMessages(ctx context.Context) ([]agent.Message, error) {
	var d MessagesData
	r, err := c.request(ctx, Command{Type: CmdGetMessages}, nil)
	if err != nil {
		return nil, err
	}
	return d.Messages, decodeData(r, &d)
}

// GetLastAssistantText returns the text of the last answer that did not
// fail; ok is false when there is none.
func (c *Client) GetLastAssistantText(ctx context.Context) (text string, ok bool, err error) {
	var d LastAssistantTextData
	r, err := c.request(ctx, Command{Type: CmdGetLastAssistantText}, nil)
	if err != nil {
		return "", false, err
	}
	if err := decodeData(r, &d); err != nil || d.Text == nil {
		return "", false, err
	}
	return *d.Text, true, nil
}

// Compact compacts the session now (between prompts) and returns the
// compaction's result when it is done; with nothing to compact it fails
// with NothingToCompactError. Compaction calls the model, so give ctx
// room (WithRequestTimeout applies too).
func (c *Client) Compact(ctx context.Context, customInstructions string) (agent.CompactionResult, error) {
	var d agent.CompactionResult
	r, err := c.request(ctx, Command{Type: CmdCompact, CustomInstructions: customInstructions}, nil)
	if err != nil {
		return d, err
	}
	return d, decodeData(r, &d)
}

// Steer queues message for the running prompt: it is delivered after the
// current tool batch, whose calls not started yet are skipped.
func (c *Client) Steer(ctx context.Context, message string) error {
	_, err := c.request(ctx, Command{Type: CmdSteer, Message: message}, nil)
	return err
}

// FollowUp queues message for when the running prompt would end.
func (c *Client) FollowUp(ctx context.Context, message string) error {
	_, err := c.request(ctx, Command{Type: CmdFollowUp, Message: message}, nil)
	return err
}

// ApproveTool decides a tool call waiting for approval
// (tools.requireApproval).
func (c *Client) ApproveTool(ctx context.Context, toolCallID string, approved bool, reason string) error {
	_, err := c.request(ctx, Command{Type: CmdApproveTool, ToolCallID: toolCallID, Approved: &approved, Reason: reason}, nil)
	return err
}

// Send sends any command (its ID is set when empty) and returns its
// response; an error response is returned as *CommandError.
func (c *Client) Send(ctx context.Context, cmd Command) (Response, error) {
	return c.request(ctx, cmd, nil)
}

// Done is closed when the process has exited.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close closes the process's stdin, which makes `starter rpc` detach from
// a running prompt (it keeps running in Temporal) and exit 0, and waits for
// the exit; after the close timeout it kills the process. It returns nil
// when the process exited with status 0.
func (c *Client) Close() error {
	c.writeMu.Lock()
	_ = c.stdin.Close()
	c.writeMu.Unlock()
	t := time.NewTimer(c.opts.closeTimeout)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd.ProcessState != nil && c.cmd.ProcessState.Success() {
		return nil
	}
	return c.exitErr
}

func (c *Client) request(ctx context.Context, cmd Command, acked func(Response)) (Response, error) {
	c.mu.Lock()
	if c.exitErr != nil {
		err := c.exitErr
		c.mu.Unlock()
		return Response{}, fmt.Errorf("rpc %s: %w", cmd.Type, err)
	}
	if cmd.ID == "" {
		c.nextID++
		cmd.ID = "req-" + strconv.FormatUint(c.nextID, 10)
	}
	p := &pendingRequest{ch: make(chan Response, 1), acked: acked}
	c.pending[cmd.ID] = p
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, cmd.ID)
		c.mu.Unlock()
	}
	if err := c.write(cmd); err != nil {
		forget()
		return Response{}, fmt.Errorf("rpc %s: send: %w", cmd.Type, err)
	}
	if c.opts.requestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.requestTimeout)
		defer cancel()
	}
	select {
	case r := <-p.ch:
		return r, responseError(r)
	case <-ctx.Done():
		forget()
		return Response{}, fmt.Errorf("rpc %s: no response: %w", cmd.Type, ctx.Err())
	case <-c.done:
		select {
		case r := <-p.ch: // answered just before the exit
			return r, responseError(r)
		default:
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		return Response{}, fmt.Errorf("rpc %s: %w", cmd.Type, c.exitErr)
	}
}

func responseError(r Response) error {
	if r.Success {
		return nil
	}
	return &CommandError{Command: r.Command, Message: r.Error}
}

func decodeData(r Response, v any) error {
	if len(r.Data) == 0 {
		return fmt.Errorf("rpc %s: response has no data", r.Command)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		return fmt.Errorf("rpc %s: decode data: %w", r.Command, err)
	}
	return nil
}
