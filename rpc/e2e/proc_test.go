package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/rpc"
)

// lineTimeout bounds every wait for a line of `starter rpc`.
const lineTimeout = 90 * time.Second

// proc is `starter rpc` (this test binary as the child, childEnv) driven
// line by line on its stdin and stdout, as any client of the protocol
// drives it (pi's RpcClient does the same in test/pirpc). It keeps every
// line it read, in order, with the time it arrived; tests run on one
// goroutine and read as far as they need.
type proc struct {
	t      *testing.T
	kill   func()
	stdin  io.WriteCloser
	in     chan timedLine
	exited chan error
	nextID int
	// lines are the lines read so far; mark is where the next waitEvent
	// starts looking; taken are the responses returned.
	lines []timedLine
	mark  int
	taken map[int]bool
	trace lockedBuffer
}

// timedLine is one stdout line and when it was read.
type timedLine struct {
	raw string
	rpc.Line
	at time.Time
}

// startProc runs `starter rpc args...` in dir ("": this directory).
func startProc(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"rpc"}, args...)...)
	cmd.Dir, cmd.Env, cmd.Stderr = dir, append(os.Environ(), childEnv+"=1"), testWriter{t}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return newProc(t, stdin, stdout, cmd.Wait, func() { _ = cmd.Process.Kill() })
}

// newProc drives a server of the protocol on stdin and stdout; wait
// returns its end, kill ends it.
func newProc(t *testing.T, stdin io.WriteCloser, stdout io.Reader, wait func() error, kill func()) *proc {
	p := &proc{t: t, kill: kill, stdin: stdin, in: make(chan timedLine, 1024), exited: make(chan error, 1), taken: map[int]bool{}}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			raw := sc.Text()
			l, err := rpc.DecodeLine([]byte(raw))
			if err != nil {
				t.Errorf("stdout line is not protocol: %v", err)
				continue
			}
			p.in <- timedLine{raw, l, time.Now()}
		}
		close(p.in)
		p.exited <- wait()
	}()
	t.Cleanup(func() {
		_ = p.close()
		if testing.Verbose() {
			t.Logf("protocol trace:\n%s", p.trace.String())
		}
	})
	return p
}

// sendRaw writes one input line as it is.
func (p *proc) sendRaw(line string) {
	p.t.Helper()
	fmt.Fprintf(&p.trace, "> %s\n", line)
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("write %q: %v", line, err)
	}
}

// send writes a command, giving it an id when it has none, and returns
// the id.
func (p *proc) send(cmd rpc.Command) string {
	p.t.Helper()
	if cmd.ID == "" {
		p.nextID++
		cmd.ID = "req-" + strconv.Itoa(p.nextID)
	}
	b, err := json.Marshal(cmd)
	if err != nil {
		p.t.Fatal(err)
	}
	p.sendRaw(string(b))
	return cmd.ID
}

// next reads the next line.
func (p *proc) next() timedLine {
	p.t.Helper()
	select {
	case l, ok := <-p.in:
		if !ok {
			p.t.Fatalf("starter rpc closed its stdout: %v", <-p.exited)
		}
		fmt.Fprintf(&p.trace, "< %s\n", l.raw)
		p.lines = append(p.lines, l)
		return l
	case <-time.After(lineTimeout):
		p.t.Fatalf("no line from starter rpc within %s", lineTimeout)
	}
	return timedLine{}
}

// response returns the first response with id not returned yet,
// reading up to it when it has not come yet.
func (p *proc) response(id string) rpc.Response {
	p.t.Helper()
	for i := 0; ; i++ {
		if i == len(p.lines) {
			p.next()
		}
		if r := p.lines[i].Response; r != nil && r.ID == id && !p.taken[i] {
			p.taken[i] = true
			return *r
		}
	}
}

// request sends cmd and returns its response.
func (p *proc) request(cmd rpc.Command) rpc.Response {
	p.t.Helper()
	return p.response(p.send(cmd))
}

// ok is request for a command that must succeed.
func (p *proc) ok(cmd rpc.Command) rpc.Response {
	p.t.Helper()
	r := p.request(cmd)
	if !r.Success {
		p.t.Fatalf("%s: %s", cmd.Type, r.Error)
	}
	return r
}

// waitEvent reads up to the next event of type typ after the last one
// waitEvent returned, and returns it.
func (p *proc) waitEvent(typ string) agent.Event {
	p.t.Helper()
	for i := p.mark; ; i++ {
		if i == len(p.lines) {
			p.next()
		}
		if e := p.lines[i].Event; e != nil && e.Type == typ {
			p.mark = i + 1
			return *e
		}
	}
}

// prompt sends a prompt that must start.
func (p *proc) prompt(message string) {
	p.t.Helper()
	p.ok(rpc.Command{Type: rpc.CmdPrompt, Message: message})
}

// waitIdle reads up to the agent_settled after the next prompt_end and
// returns that prompt_end.
func (p *proc) waitIdle() agent.Event {
	p.t.Helper()
	end := p.waitEvent(agent.EventPromptEnd)
	p.waitEvent(rpc.EventAgentSettled)
	return end
}

// state is get_state.
func (p *proc) state() rpc.SessionState {
	p.t.Helper()
	return decode[rpc.SessionState](p.t, p.ok(rpc.Command{Type: rpc.CmdGetState}))
}

// events are the events read so far, in order.
func (p *proc) events() []agent.Event {
	var out []agent.Event
	for _, l := range p.lines {
		if l.Event != nil {
			out = append(out, *l.Event)
		}
	}
	return out
}

// close closes stdin, which detaches a running prompt, and returns the
// process's exit error (nil: status 0).
func (p *proc) close() error {
	_ = p.stdin.Close()
	for {
		select {
		case _, ok := <-p.in:
			if !ok {
				err := <-p.exited
				p.exited <- err
				return err
			}
		case <-time.After(lineTimeout):
			p.kill()
			return fmt.Errorf("starter rpc did not exit after stdin closed")
		}
	}
}

func decode[T any](t *testing.T, r rpc.Response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Data, &v); err != nil {
		t.Fatalf("decode data of %s: %v (%s)", r.Command, err, r.Data)
	}
	return v
}
