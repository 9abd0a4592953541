package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/testserver"
)

// lockedBuffer is a bytes buffer written by one goroutine and read by
// another.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Issue 20 item 10, spec 15.1.6: a follow-up queued during a long step
// (a model call that hangs) and dropped by an abort is named to the user
// by every client: `starter prompt` writes "not delivered (follow-up,
// prompt aborted): <message>" on stderr, `starter events` (with and
// without --follow) too, their --json prompt_end carries it in
// "undelivered", and RPC mode's prompt_end line has the same
// "undelivered" field and "undeliveredMessages" with its kind and reason
// (issue 23: the workflow's prompt_end carries them).
func TestIntegration_UndeliveredFollowUpNamedAfterAbort(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	const followUp = "and then summarize the diff"
	const line = "not delivered (follow-up, prompt aborted): " + followUp + "\n"

	type outcome struct {
		code        int
		out, stderr string
	}
	done := make(chan outcome, 1)
	go func() {
		code, out, stderr := e.starter("prompt", "--session", "undeliv", "--fault", "hang", "start a long step")
		done <- outcome{code, out, stderr}
	}()
	e.waitEvent("undeliv", time.Minute, isType(agent.EventAgentStart))
	for _, args := range [][]string{{"follow-up", "--session", "undeliv", followUp}, {"abort", "--session", "undeliv"}} {
		if code, out, stderr := e.starter(args...); code != cli.ExitOK {
			t.Fatalf("%s: exit %d\n%s%s", args[0], code, out, stderr)
		}
	}
	var got outcome
	select {
	case got = <-done:
	case <-time.After(time.Minute):
		t.Fatal("starter prompt still runs a minute after the abort")
	}
	if got.code != cli.ExitFailed || !strings.Contains(got.out, "prompt aborted") || !strings.HasSuffix(got.stderr, line) {
		t.Errorf("starter prompt after the abort: exit %d, want 1 and stderr ending %q\nstdout:\n%s\nstderr:\n%s", got.code, line, got.out, got.stderr)
	}

	// events --follow of the ended prompt, for people and as JSON.
	code, out, stderr := e.starter("events", "--session", "undeliv", "--follow")
	if code != cli.ExitFailed || stderr != line {
		t.Errorf("events --follow: exit %d, stderr %q; want 1 and %q\n%s", code, stderr, line, out)
	}
	code, out, stderr = e.starter("events", "--session", "undeliv")
	if code != cli.ExitOK || stderr != line {
		t.Errorf("events: exit %d, stderr %q; want 0 and %q\n%s", code, stderr, line, out)
	}
	code, out, _ = e.starter("events", "--session", "undeliv", "--follow", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var end struct {
		Type        string   `json:"type"`
		Status      string   `json:"status"`
		Undelivered []string `json:"undelivered"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &end); err != nil || code != cli.ExitFailed ||
		end.Type != agent.EventPromptEnd || end.Status != agent.StatusAborted || len(end.Undelivered) != 1 || end.Undelivered[0] != followUp {
		t.Errorf("events --follow --json: exit %d, last line %q (%v); want the aborted prompt_end with undelivered [%q]", code, lines[len(lines)-1], err, followUp)
	}

	// RPC mode: prompt, follow_up and abort on stdin; the prompt_end line
	// names the message.
	rpcEnd := rpcPromptEnd(t, e, "undeliv-rpc", followUp)
	if !strings.Contains(rpcEnd, `"status":"aborted"`) || !strings.Contains(rpcEnd, `"undelivered":["`+followUp+`"]`) {
		t.Errorf("RPC prompt_end %s, want status aborted and undelivered [%q]", rpcEnd, followUp)
	}
	if want := `"undeliveredMessages":[{"kind":"follow_up","text":"` + followUp + `","reason":"prompt aborted"}]`; !strings.Contains(rpcEnd, want) {
		t.Errorf("RPC prompt_end %s, want %s", rpcEnd, want)
	}
}

// rpcPromptEnd runs `starter rpc` for session with a model call that
// hangs, sends a prompt, then followUp as a follow_up and an abort once
// the prompt runs, and returns its prompt_end line as written.
func rpcPromptEnd(t *testing.T, e *env, session, followUp string) string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr lockedBuffer
	vars := map[string]string{
		"DURABLE_AGENT_HOME":               e.dataDir,
		"TEMPORAL_ADDRESS":                 e.s.Temporal.Address,
		"DURABLE_AGENT_TEMPORAL_TASKQUEUE": e.s.Temporal.TaskQueue,
		"DURABLE_AGENT_SCRIPTED_FAULTS":    "hang",
	}
	testserver.SetEnv(t, vars)
	exited := make(chan int, 1)
	go func() {
		code := cli.Main([]string{"rpc", "--session", session}, cli.Env{Stdin: inR, Stdout: outW, Stderr: &stderr})
		outW.Close()
		exited <- code
	}()
	defer func() {
		inW.Close()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Errorf("starter rpc still runs 30 s after stdin closed")
		}
	}()
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(l string) {
		if _, err := io.WriteString(inW, l+"\n"); err != nil {
			t.Fatalf("write %s: %v", l, err)
		}
	}
	followUpJSON, _ := json.Marshal(followUp)
	send(`{"id":"1","type":"prompt","message":"start a long step"}`)
	deadline := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("starter rpc ended its output before prompt_end\nstderr:\n%s", stderr.String())
			}
			switch {
			case strings.Contains(l, `"type":"agent_start"`):
				send(fmt.Sprintf(`{"id":"2","type":"follow_up","message":%s}`, followUpJSON))
			case strings.Contains(l, `"id":"2"`) && strings.Contains(l, `"type":"response"`):
				if !strings.Contains(l, `"success":true`) {
					t.Fatalf("follow_up answered %s", l)
				}
				send(`{"id":"3","type":"abort"}`)
			case strings.Contains(l, `"type":"prompt_end"`):
				return l
			}
		case <-deadline:
			t.Fatalf("no prompt_end within a minute\nstderr:\n%s", stderr.String())
		}
	}
}
