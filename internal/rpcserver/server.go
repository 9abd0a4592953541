package rpcserver

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/rpc"
	"github.com/durableagent/durableagent/workflows"
)

// DefaultCommandTimeout bounds each command's backend call (a prompt's
// start, a signal, a query), so an unreachable Temporal gives an error
// response instead of a silent hang. Following a prompt and compacting
// are not bounded: they last as long as the work.
const DefaultCommandTimeout = 30 * time.Second

// Server serves the RPC protocol. The zero value of every field but
// Backend is a working default.
type Server struct {
	Backend *client.Session
	// MaxLineBytes bounds an input line (0: DefaultMaxLineBytes).
	MaxLineBytes int
	// CommandTimeout bounds each command's backend call (0:
	// DefaultCommandTimeout).
	CommandTimeout time.Duration
	// Protocol is the pi protocol generation clients speak (""; ProtocolPi16).
	Protocol Protocol
	// Logf receives notes for people, never protocol (the CLI sends them
	// to stderr). nil: dropped.
	Logf func(format string, args ...any)
}

// Serve reads commands from in until it ends, answering and streaming on
// out. At the end of in it detaches from a running prompt (which keeps
// running in Temporal) and returns nil; when ctx ends it does the same and
// returns ctx.Err(). It returns an error if in cannot be read or out cannot
// be written. Serve returns only after every goroutine it started has
// stopped writing.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	if s.Backend == nil {
		return errors.New("rpc: serve: no backend")
	}
	bg, stopBG := context.WithCancel(ctx)
	c := &conn{s: s, b: s.Backend, out: &lineWriter{w: out}, bg: bg, stopWatch: func() {}}
	defer c.shutdown(stopBG)
	c.wg.Add(1)
	go c.watchQueue()

	lines := make(chan inputLine)
	stopRead := make(chan struct{})
	defer close(stopRead)
	go func() {
		r := bufio.NewReaderSize(in, max(min(64<<10, s.maxLine()), 16)) // 16: bufio's minimum
		for l := (inputLine{}); l.err == nil; {
			l = readLine(r, s.maxLine())
			select {
			case lines <- l:
			case <-stopRead:
				return
			}
		}
	}()

	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case l := <-lines:
			if errors.Is(l.err, io.EOF) {
				return nil
			} else if l.err != nil {
				return fmt.Errorf("rpc: read commands: %w", l.err)
			}
			c.serveLine(ctx, l)
			if err := c.out.failed(); err != nil {
				return fmt.Errorf("rpc: write: %w", err)
			}
		}
	}
}

func (s *Server) maxLine() int { return cmp.Or(s.MaxLineBytes, DefaultMaxLineBytes) }

func (s *Server) timeout() time.Duration { return cmp.Or(s.CommandTimeout, DefaultCommandTimeout) }

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// conn is the state of one Serve call.
type conn struct {
	s   *Server
	b   *client.Session
	out *lineWriter
	// bg is the context of work that outlives its command (following a
	// prompt, compacting); cancelled when Serve returns.
	bg context.Context
	wg sync.WaitGroup

	mu        sync.Mutex
	active    *follower          // the prompt being followed, nil when idle
	idle      idleQueue          // messages queued while idle, for the next prompt
	stopWatch context.CancelFunc // ends watchRun's follow
}

// shutdown detaches from running work and waits until it stops writing.
func (c *conn) shutdown(stop context.CancelFunc) {
	f := c.activeFollower()
	stop()
	c.wg.Wait()
	if f != nil {
		c.detached(f)
	}
}

// detached says that this connection stopped following f's prompt.
func (c *conn) detached(f *follower) {
	c.s.logf("rpc: detached from prompt %s (run %s); it keeps running in Temporal (follow it: starter events --session %s --follow)",
		f.prompt.WorkflowID, f.prompt.RunID, strings.TrimPrefix(f.prompt.WorkflowID, workflows.WorkflowIDPrefix))
}

func (c *conn) serveLine(ctx context.Context, l inputLine) {
	if l.tooLong > 0 {
		c.fail("", rpc.ParseCommand, fmt.Sprintf("line too long (%d bytes, max %d)", l.tooLong, c.s.maxLine()))
		return
	}
	if len(bytes.TrimSpace(l.data)) == 0 {
		return // blank lines separate nothing and ask nothing
	}
	cmd, perr := parseCommand(l.data)
	if perr != nil {
		c.fail(perr.id, perr.command, perr.msg)
		return
	}
	c.dispatch(ctx, cmd)
}

// respond writes the response to cmd: an error response with the first
// line of err, else a success (data nil: plain success).
func (c *conn) respond(cmd rpc.Command, data any, err error) {
	r := rpc.Response{ID: cmd.ID, Type: rpc.ResponseType, Command: cmd.Type, Success: err == nil}
	if err != nil {
		r.Error = line.First(err.Error())
	} else if data != nil {
		if r.Data, err = agent.MarshalPlain(data); err != nil {
			c.fail(cmd.ID, cmd.Type, "encode the response: "+err.Error())
			return
		}
	}
	_ = c.out.write(r)
}

// fail writes an error response.
func (c *conn) fail(id, command, msg string) {
	_ = c.out.write(rpc.Response{ID: id, Type: rpc.ResponseType, Command: command, Error: msg})
}
