package rpcserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/rpc"
)

// maxFuzzLines bounds the commands of one input: each that reaches the
// offline backend waits for the command timeout.
const maxFuzzLines = 8

// FuzzServe runs the whole RPC loop (line reader, decoder, dispatch) on
// arbitrary input against the offline backend (Temporal unreachable),
// followed by one get_available_models.
// Fuzz it with (docs/reliability.md):
//
//	go test -run='^$' -fuzz='^FuzzServe$' -fuzztime=30s ./internal/rpcserver/
//
// Whatever the input, Serve must return without error at its end, every
// output line must be a valid UTF-8 protocol line, and the command after
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
	b := offline(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Split(data, []byte("\n"))
		if len(lines) > maxFuzzLines {
			lines = lines[:maxFuzzLines]
		}
		id := "fuzz-next"
		for bytes.Contains(data, []byte(id)) {
			id += "+"
		}
		in := append(bytes.Join(lines, []byte("\n")), "\n"+`{"id":"`+id+`","type":"get_available_models"}`+"\n"...)
		var out bytes.Buffer
		srv := &rpcserver.Server{Backend: b, MaxLineBytes: 512, CommandTimeout: 100 * time.Millisecond}
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
				answered = r.Success && r.Command == rpc.CmdGetAvailableModels
			}
		}
		if !answered {
			t.Fatalf("get_available_models after %q not answered; output:\n%s", data, out.Bytes())
		}
	})
}
