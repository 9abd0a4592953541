package badinput

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/rpc"
)

// rpcLoop is one RPC server loop (Serve on pipes, as `starter rpc` runs
// it on stdin and stdout) with the real backend, its data in a temporary
// directory and Temporal at an address where nothing listens: bad lines
// never reach it, and the probe (get_available_models) needs no server.
type rpcLoop struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startRPC(t *testing.T) *rpcLoop {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	l := &rpcLoop{t: t, in: inW, out: bufio.NewReaderSize(outR, 1<<16), done: make(chan error, 1)}
	s := settings.Defaults()
	s.DataDir, s.Temporal.Address = t.TempDir(), "127.0.0.1:1"
	c, err := sdkclient.NewLazyClient(sdkclient.Options{HostPort: s.Temporal.Address,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	k, err := client.NewController(c, s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := client.Open(k, s, "s1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		err := (&rpcserver.Server{Backend: b}).Serve(ctx, inR, outW)
		outW.Close()
		l.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
	})
	return l
}

// send writes one line in the background (a 10 MB line does not fit in a
// pipe, and the loop answers only once it has read it all).
func (l *rpcLoop) send(line string) {
	go func() { _, _ = io.WriteString(l.in, line+"\n") }()
}

// response reads the next output line, which must be a response.
func (l *rpcLoop) response() rpc.Response {
	l.t.Helper()
	got := make(chan string, 1)
	go func() {
		s, _ := l.out.ReadString('\n')
		got <- s
	}()
	select {
	case s := <-got:
		line, err := rpc.DecodeLine([]byte(s))
		if err != nil || line.Response == nil {
			l.t.Fatalf("output %q is not a response: %v", s, err)
		}
		return *line.Response
	case <-time.After(20 * time.Second):
		l.t.Fatal("no response within 20s: the loop stopped serving")
	}
	return rpc.Response{}
}

// issue 7: bad RPC lines get an error response naming the problem (echoing
// the id when one could be read), and the loop keeps serving: after every
// bad line, a get_available_models is answered.
func TestRPC_BadLinesAnsweredAndLoopKeepsServing(t *testing.T) {
	tenMB := `{"type":"prompt","message":"` + strings.Repeat("x", 10<<20) + `"}`
	cases := []struct {
		name    string
		line    string
		id      string
		command string
		want    string
	}{
		{"not JSON", `hello there`, "", rpc.ParseCommand, "invalid JSON"},
		{"truncated JSON", `{"id":"t","type":"abort"`, "", rpc.ParseCommand, "invalid JSON"},
		{"a JSON array", `[{"type":"abort"}]`, "", rpc.ParseCommand, "must be a JSON object, got an array"},
		{"a JSON number", `42`, "", rpc.ParseCommand, "must be a JSON object, got a number"},
		{"a JSON string", `"get_state"`, "", rpc.ParseCommand, "must be a JSON object, got a string"},
		{"JSON null", `null`, "", rpc.ParseCommand, "got null"},
		{"an empty object", `{}`, "", rpc.ParseCommand, `missing field "type"`},
		{"unknown type", `{"id":"u","type":"reboot"}`, "u", "reboot", `Unknown command: reboot`},
		{"type in the wrong case", `{"id":"u","type":"PROMPT","message":"x"}`, "u", "PROMPT", `Unknown command: PROMPT`},
		{"type is a number", `{"id":"n","type":3}`, "n", rpc.ParseCommand, `field "type" must be a string, got a number`},
		{"type is null", `{"id":"n","type":null}`, "n", rpc.ParseCommand, `field "type" must be a string, got null`},
		{"id is an object", `{"id":{"a":1},"type":"get_state"}`, "", rpc.CmdGetState, `field "id" must be a string, got an object`},
		{"message is a number", `{"id":"m","type":"prompt","message":12}`, "m", rpc.CmdPrompt, `field "message" must be a string, got a number`},
		{"message missing", `{"id":"m","type":"prompt"}`, "m", rpc.CmdPrompt, `missing field "message"`},
		{"message blank", `{"id":"m","type":"prompt","message":"\t "}`, "m", rpc.CmdPrompt, `field "message" is empty`},
		{"enabled as a string", `{"id":"e","type":"set_auto_retry","enabled":"false"}`, "e", rpc.CmdSetAutoRetry, `field "enabled" must be a boolean, got a string`},
		{"enabled as a number", `{"id":"e","type":"set_auto_retry","enabled":0}`, "e", rpc.CmdSetAutoRetry, `field "enabled" must be a boolean, got a number`},
		{"enabled missing", `{"id":"e","type":"set_auto_compaction"}`, "e", rpc.CmdSetAutoCompaction, `missing field "enabled" (a boolean)`},
		{"misspelt field", `{"id":"e","type":"set_auto_retry","enable":true}`, "e", rpc.CmdSetAutoRetry, `unknown field "enable"`},
		{"instructions as a list", `{"id":"c","type":"compact","customInstructions":["a"]}`, "c", rpc.CmdCompact, `field "customInstructions" must be a string, got an array`},
		{"10 MB line", tenMB, "", rpc.ParseCommand, "line too long"},
		{"invalid UTF-8 in a field", "{\"id\":\"x\",\"type\":\"prompt\",\"message\":\"caf\xe9\"}", "", rpc.ParseCommand, "not valid UTF-8"},
		{"invalid UTF-8 alone", "\xff\xfe\xfd", "", rpc.ParseCommand, "not valid UTF-8"},
		{"NUL bytes", "\x00\x00", "", rpc.ParseCommand, "invalid JSON"},
		{"nesting deeper than JSON allows", strings.Repeat("[", 20000) + strings.Repeat("]", 20000), "", rpc.ParseCommand, "invalid JSON"},
	}
	l := startRPC(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l.t = t
			l.send(tc.line)
			r := l.response()
			if r.Success || r.ID != tc.id || r.Command != tc.command || !strings.Contains(r.Error, tc.want) || strings.Contains(r.Error, "\n") {
				t.Errorf("response %+v; want an error for %q with id %q naming %q", r, tc.command, tc.id, tc.want)
			}
			t.Logf("error: %.160s", r.Error)
			l.send(`{"id":"probe","type":"get_available_models"}`)
			if p := l.response(); !p.Success || p.ID != "probe" {
				t.Fatalf("get_available_models after the bad line: %+v", p)
			}
		})
	}
	l.in.Close()
	select {
	case err := <-l.done:
		if err != nil {
			t.Fatalf("Serve after end of input: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return at end of input")
	}
}
