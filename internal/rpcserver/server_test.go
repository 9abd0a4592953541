package rpcserver_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/rpc"
)

// Issue 6: bad input never kills the loop; every bad line gets an error
// response (command = the type, or "parse") and the next line is served.
func TestServe_BadInputNeverEndsTheLoop(t *testing.T) {
	cases := []struct {
		name    string
		line    string
		id      string
		command string
		err     string
	}{
		{"not JSON", `hello`, "", "parse", "Failed to parse command: invalid JSON"},
		{"truncated JSON", `{"type":"get_state"`, "", "parse", "invalid JSON"},
		{"array", `[1,2]`, "", "parse", "must be a JSON object, got an array"},
		{"null", `null`, "", "parse", "must be a JSON object, got null"},
		{"string", `"prompt"`, "", "parse", "must be a JSON object, got a string"},
		{"missing type", `{"id":"a"}`, "a", "parse", `missing field "type"`},
		{"type not a string", `{"id":"a","type":5}`, "a", "parse", `field "type" must be a string, got a number`},
		{"unknown type", `{"id":"a","type":"reboot"}`, "a", "reboot", `Unknown command: reboot`},
		{"bad streaming behaviour", `{"id":"a","type":"prompt","message":"x","streamingBehavior":"later"}`, "a", "prompt", `field "streamingBehavior" is "later", want "steer" or "followUp"`},
		{"image not base64", `{"id":"a","type":"prompt","message":"x","images":[{"type":"image","data":"%%","mimeType":"image/png"}]}`, "a", "prompt", `images[0] data is not base64`},
		{"images not a list", `{"id":"a","type":"prompt","message":"x","images":{"type":"image"}}`, "a", "prompt", `field "images" must be an array, got an object`},
		{"bad thinking level", `{"id":"a","type":"set_thinking_level","level":"maximum"}`, "a", "set_thinking_level", `invalid thinking level "maximum" (want one of off, minimal, low, medium, high, xhigh, max)`},
		{"bad queue mode", `{"id":"a","type":"set_steering_mode","mode":"some"}`, "a", "set_steering_mode", `invalid mode "some" (want all or one-at-a-time)`},
		{"approve without decision", `{"id":"a","type":"approve_tool","toolCallId":"c"}`, "a", "approve_tool", `missing field "approved" (a boolean)`},
		{"blank bash command", `{"id":"a","type":"bash","command":" "}`, "a", "bash", `field "command" is empty`},
		{"excludeFromContext not a boolean", `{"id":"a","type":"bash","command":"ls","excludeFromContext":"yes"}`, "a", "bash", `field "excludeFromContext" must be a boolean, got a string`},
		{"id not a string", `{"id":7,"type":"get_state"}`, "", "get_state", `field "id" must be a string, got a number`},
		{"missing enabled", `{"id":"a","type":"set_auto_retry"}`, "a", "set_auto_retry", `missing field "enabled" (a boolean)`},
		{"null enabled", `{"id":"a","type":"set_auto_retry","enabled":null}`, "a", "set_auto_retry", `missing field "enabled"`},
		{"enabled as string", `{"id":"a","type":"set_auto_retry","enabled":"yes"}`, "a", "set_auto_retry", `field "enabled" must be a boolean, got a string`},
		{"misspelt field", `{"id":"a","type":"set_auto_retry","enable":false}`, "a", "set_auto_retry", `unknown field "enable"`},
		{"field of another command", `{"id":"a","type":"abort","message":"x"}`, "a", "abort", `unknown field "message"`},
		{"missing message", `{"id":"a","type":"prompt"}`, "a", "prompt", `missing field "message" (a string)`},
		{"message not a string", `{"id":"a","type":"prompt","message":["hi"]}`, "a", "prompt", `field "message" must be a string, got an array`},
		{"blank message", `{"id":"a","type":"prompt","message":"  "}`, "a", "prompt", `field "message" is empty`},
		{"compaction enabled as number", `{"id":"a","type":"set_auto_compaction","enabled":1}`, "a", "set_auto_compaction", `must be a boolean, got a number`},
		{"invalid UTF-8", "{\"id\":\"a\",\"type\":\"prompt\",\"message\":\"\xff\xfe\"}", "", "parse", "not valid UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := serve(t, &rpcserver.Server{Backend: offline(t)})
			h.send(c.line)
			h.send(`{"id":"next","type":"get_available_models"}`)
			r := h.response()
			if r.Success || r.ID != c.id || r.Command != c.command || !strings.Contains(r.Error, c.err) {
				t.Errorf("response = %+v, want error for id %q command %q containing %q", r, c.id, c.command, c.err)
			}
			if r.Type != rpc.ResponseType {
				t.Errorf("type = %q, want %q", r.Type, rpc.ResponseType)
			}
			if next := h.response(); !next.Success || next.ID != "next" {
				t.Errorf("the line after the bad one was not served: %+v", next)
			}
			if err := h.closeInput(); err != nil {
				t.Errorf("Serve = %v, want nil", err)
			}
		})
	}
}

// Issue 6: a line over the maximum (1 MiB by default) is answered with
// "line too long (N bytes, max M)" and the loop keeps serving.
func TestServe_LineTooLongIsAnErrorAndTheLoopGoesOn(t *testing.T) {
	cases := []struct {
		name string
		max  int
		line string
		want string
	}{
		{"default max plus one", 0, `{"type":"prompt","message":"` + strings.Repeat("x", rpcserver.DefaultMaxLineBytes) + `"}`,
			"line too long (1048606 bytes, max 1048576)"},
		{"small max", 40, `{"type":"prompt","message":"` + strings.Repeat("y", 100) + `"}`,
			"line too long (130 bytes, max 40)"},
		{"small max with CRLF", 40, `{"type":"prompt","message":"` + strings.Repeat("y", 100) + "\"}\r",
			"line too long (131 bytes, max 40)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := serve(t, &rpcserver.Server{Backend: offline(t), MaxLineBytes: c.max})
			h.send(c.line)
			h.send(`{"id":"next","type":"get_commands"}`)
			if r := h.response(); r.Success || r.Command != rpc.ParseCommand || r.Error != c.want {
				t.Errorf("response = %+v, want parse error %q", r, c.want)
			}
			if r := h.response(); !r.Success || r.ID != "next" {
				t.Errorf("next line not served: %+v", r)
			}
		})
	}
}

// Blank lines and a last line without a newline are handled like a
// terminal user would expect: ignored, and served.
func TestServe_BlankLinesIgnoredLastLineWithoutNewlineServed(t *testing.T) {
	h := serve(t, &rpcserver.Server{Backend: offline(t)})
	h.send("")
	h.send("   \r")
	if _, err := h.in.Write([]byte(`{"id":"last","type":"get_available_models"}`)); err != nil {
		t.Fatal(err)
	}
	h.in.Close()
	if r := h.response(); !r.Success || r.ID != "last" {
		t.Errorf("response = %+v, want get_available_models success for id last", r)
	}
	if err := <-h.done; err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// A backend call that hangs (Temporal's address accepts connections and
// never answers) is cut by the command timeout: an error response, and the
// loop goes on.
func TestServe_CommandTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn // accepted, never answered
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})
	h := serve(t, &rpcserver.Server{Backend: offlineAt(t, l.Addr().String()), CommandTimeout: 200 * time.Millisecond})
	h.send(`{"id":"1","type":"get_state"}`)
	h.send(`{"id":"2","type":"get_available_models"}`)
	if r := h.response(); r.Success || r.ID != "1" || !strings.Contains(r.Error, "deadline exceeded") {
		t.Errorf("hung command = %+v, want a deadline error", r)
	}
	if r := h.response(); !r.Success || r.ID != "2" {
		t.Errorf("next command = %+v", r)
	}
}

// get_commands is an empty list; export_html a clear "not supported".
func TestServe_CommandsWithoutCounterpart(t *testing.T) {
	h := serve(t, &rpcserver.Server{Backend: offline(t)})
	for _, tc := range []struct{ line, data, err string }{
		{`{"id":"1","type":"get_commands"}`, `{"commands":[]}`, ""},
		{`{"id":"2","type":"export_html","outputPath":"/tmp/x.html"}`, "", "export_html is not supported"},
	} {
		h.send(tc.line)
		r := h.response()
		if string(r.Data) != tc.data || !strings.Contains(r.Error, tc.err) || r.Success != (tc.err == "") {
			t.Errorf("%s → %+v", tc.line, r)
		}
	}
}
