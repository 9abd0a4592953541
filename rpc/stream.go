package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/durableagent/durableagent/agent"
)

// The client's plumbing: one goroutine reads stdout and routes each line
// (a response to its waiting request, everything else to the dispatcher);
// one goroutine dispatches events to listeners and ends prompts, in stream
// order, so a slow listener never stalls the reading.

func (c *Client) write(cmd Command) error {
	b, err := json.Marshal(cmd)
	if err != nil {
		return err
	}
	c.trace(">", b)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.stdin.Write(append(b, '\n'))
	return err
}

func (c *Client) trace(dir string, line []byte) {
	if c.opts.trace == nil {
		return
	}
	c.traceMu.Lock()
	defer c.traceMu.Unlock()
	fmt.Fprintf(c.opts.trace, "%s %s\n", dir, bytes.TrimRight(line, "\r\n"))
}

// read routes stdout lines: responses to their requests, events and
// unclaimed responses to the dispatcher, in order.
func (c *Client) read(stdout io.Reader) {
	br := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			c.route(line)
		}
		if err != nil {
			break
		}
	}
	werr := c.cmd.Wait()
	c.mu.Lock()
	status := "exit status 0"
	if werr != nil {
		status = werr.Error()
	}
	// Requests still waiting see done and report exitErr.
	c.exitErr = fmt.Errorf("%w (%s)%s", ErrExited, status, c.stderr.suffix())
	c.pending = map[string]*pendingRequest{}
	c.mu.Unlock()
	c.queue.push(item{closed: true})
	close(c.done)
}

func (c *Client) route(line []byte) {
	c.trace("<", line)
	l, err := DecodeLine(line)
	if err != nil {
		c.stderr.Write([]byte("rpc client: " + err.Error() + "\n"))
		return
	}
	if l.Event != nil {
		c.queue.push(item{event: l.Event})
		return
	}
	r := *l.Response
	c.mu.Lock()
	p := c.pending[r.ID]
	delete(c.pending, r.ID)
	c.mu.Unlock()
	if p == nil {
		c.queue.push(item{response: &r}) // e.g. a prompt's late failure
		return
	}
	if r.Success && p.acked != nil {
		p.acked(r)
	}
	p.ch <- r
}

// dispatch delivers events to listeners and ends prompts, in stream order.
func (c *Client) dispatch() {
	for {
		it := c.queue.pop()
		switch {
		case it.event != nil:
			c.mu.Lock()
			ls := append([]listener(nil), c.listeners...)
			c.mu.Unlock()
			for _, l := range ls {
				l.fn(*it.event)
			}
			if it.event.Type == agent.EventPromptEnd {
				c.endPrompt("", *it.event, nil)
			}
		case it.response != nil:
			if r := it.response; r.Command == CmdPrompt && !r.Success && r.ID != "" {
				c.endPrompt(r.ID, agent.Event{}, &CommandError{Command: r.Command, Message: r.Error})
			}
		case it.closed:
			c.mu.Lock()
			err := c.exitErr
			c.mu.Unlock()
			c.endPrompt("", agent.Event{}, err)
			return
		}
	}
}

// endPrompt ends the awaited prompt (only the one with id, when id is
// set: a late failure of an older prompt ends nothing).
func (c *Client) endPrompt(id string, end agent.Event, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.current
	if w == nil || (id != "" && w.id != id) {
		return
	}
	w.end, w.err = end, err
	c.current, c.last = nil, w
	close(w.done)
}

// item is one thing for the dispatcher.
type item struct {
	event    *agent.Event
	response *Response
	closed   bool
}

// queue is an unbounded FIFO: the reader never blocks on a slow listener.
type queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []item
}

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) push(it item) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *queue) pop() item {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		q.cond.Wait()
	}
	it := q.items[0]
	q.items = q.items[1:]
	return it
}

// tail keeps the last bytes written to it (the process's stderr).
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

// suffix is ": <last stderr line>" or "".
func (t *tail) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return ": " + s
}
