package rpcserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/internal/rpcserver/rpcfake"
	"github.com/durableagent/durableagent/rpc"
)

// maxFuzzLines bounds the commands of one input: the fake backend buffers
// 16 signals for a running prompt that nobody reads.
const maxFuzzLines = 8

// FuzzServe runs the whole RPC loop (line reader, decoder, dispatch) on
// arbitrary input against the fake backend, followed by one get_state.
// Fuzz it with (docs/reliability.md):
//
//	go test -run='^$' -fuzz='^FuzzServe$' -fuzztime=30s ./internal/rpcserver/
//
// Whatever the input, Serve must return without error at its end, every
// output line must be a valid UTF-8 protocol line, and the get_state after
// the input must be answered: bad input never ends the loop.
func FuzzServe(f *testing.F) {
	for _, seed := range []string{
		`{"id":"p","type":"prompt","message":"hi"}` + "\n" + `{"type":"abort_retry"}`,
		"not json\n\n{\"type\":\"get_messages\"}\r\n",
		`{"type":"set_auto_compaction","enabled":true}` + "\n" + `{"type":"compact"}`,
		"{\"type\":\"prompt\",\"message\":\"" + string(bytes.Repeat([]byte("x"), 600)) + "\"}",
		"\xff\xfe\n{\"type\":\"abort\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Split(data, []byte("\n"))
		if len(lines) > maxFuzzLines {
			lines = lines[:maxFuzzLines]
		}
		id := "fuzz-next"
		for bytes.Contains(data, []byte(id)) {
			id += "+"
		}
		in := append(bytes.Join(lines, []byte("\n")), "\n"+`{"id":"`+id+`","type":"get_state"}`+"\n"...)
		var out bytes.Buffer
		srv := &rpcserver.Server{Backend: rpcfake.New("s"), MaxLineBytes: 512, CommandTimeout: 5 * time.Second}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Serve(ctx, bytes.NewReader(in), &out); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		answered := false
		for _, l := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
			if !utf8.Valid(l) || !json.Valid(l) {
				t.Fatalf("output line %q is not valid UTF-8 JSON", l)
			}
			dl, err := rpc.DecodeLine(l)
			if err != nil {
				t.Fatalf("output line %q: %v", l, err)
			}
			if r := dl.Response; r != nil && r.ID == id {
				answered = r.Success && r.Command == rpc.CmdGetState
			}
		}
		if !answered {
			t.Fatalf("get_state after %q not answered; output:\n%s", data, out.Bytes())
		}
	})
}
