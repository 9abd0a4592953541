package rpcserver

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/durableagent/durableagent/rpc"
)

// FuzzParseCommand feeds arbitrary lines to the RPC command decoder. `go
// test` runs it on its seeds (below and testdata/fuzz/FuzzParseCommand/);
// fuzzing is a bounded, documented command (docs/reliability.md):
//
//	go test -run='^$' -fuzz='^FuzzParseCommand$' -fuzztime=30s ./internal/rpcserver/
//
// It checks that the decoder never panics; that an accepted line is a
// valid UTF-8 JSON object of a known type whose decoded command survives a
// round trip through the protocol's rpc.Command; and that a refused line
// gets a one-line reason, under the "parse" command or its own type.
func FuzzParseCommand(f *testing.F) {
	for _, seed := range []string{
		`{"id":"1","type":"prompt","message":"fix the failing test"}`,
		`{"type":"set_auto_retry","enabled":false}`,
		`{"id":"c","type":"compact","customInstructions":null}`,
		`{"id":7,"type":"get_state"}`,
		`{"type":"set_auto_retry","enable":false}`,
		`{"type":"prompt","message":"\ud800"}`,
		`{"type":"abort","type":"prompt"}`,
		`[{"type":"abort"}]`,
		`null`,
		"{\"type\":\"prompt\",\"message\":\"\xff\"}",
		`{"type":"prompt","message":"  "}`,
		`{"type":"reboot"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		c, perr := parseCommand(line)
		if perr != nil {
			if perr.msg == "" || strings.ContainsAny(perr.msg, "\r\n") {
				t.Fatalf("parseCommand(%q): reason %q is not one line", line, perr.msg)
			}
			if perr.command != rpc.ParseCommand {
				var head struct {
					Type string `json:"type"`
				}
				if err := json.Unmarshal(line, &head); err != nil || head.Type != perr.command {
					t.Fatalf("parseCommand(%q): error under command %q, which is not the line's type", line, perr.command)
				}
			}
			return
		}
		if !utf8.Valid(line) || !json.Valid(line) {
			t.Fatalf("parseCommand accepted %q, which is not valid UTF-8 JSON", line)
		}
		if !slices.Contains(commandTypes, c.typ) {
			t.Fatalf("parseCommand(%q) accepted unknown type %q", line, c.typ)
		}
		if (c.typ == rpc.CmdPrompt || c.typ == rpc.CmdSteer || c.typ == rpc.CmdFollowUp) && strings.TrimSpace(c.str["message"]) == "" {
			t.Fatalf("parseCommand(%q) accepted a blank message", line)
		}
		// Round trip through the client's encoding of the same command.
		out := rpc.Command{ID: c.id, Type: c.typ, Message: c.str["message"], CustomInstructions: c.str["customInstructions"],
			Images: c.images, StreamingBehavior: c.str["streamingBehavior"],
			ParentSession: c.str["parentSession"], Provider: c.str["provider"], ModelID: c.str["modelId"],
			Level: c.str["level"], Mode: c.str["mode"], Command: c.str["command"], OutputPath: c.str["outputPath"],
			SessionPath: c.str["sessionPath"], EntryID: c.str["entryId"], Name: c.str["name"],
			ToolCallID: c.str["toolCallId"], Reason: c.str["reason"]}
		switch c.typ {
		case rpc.CmdSetAutoRetry, rpc.CmdSetAutoCompaction:
			out.Enabled = &c.enabled
		case rpc.CmdApproveTool:
			out.Approved = &c.enabled
		}
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		again, perr := parseCommand(b)
		if perr != nil || !reflect.DeepEqual(normalized(again), normalized(c)) {
			t.Fatalf("round trip of %q through %s: %+v, %v; want %+v", line, b, again, perr, c)
		}
	})
}

// normalized drops what the client's encoding leaves out: empty optional
// strings, an empty image list.
func normalized(c command) command {
	str := map[string]string{}
	for k, v := range c.str {
		if v != "" {
			str[k] = v
		}
	}
	c.str = str
	if len(c.images) == 0 {
		c.images = nil
	}
	return c
}

// commandTypes lists every command type of docs/rpc.md, in its order.
var commandTypes = []string{
	rpc.CmdPrompt, rpc.CmdSteer, rpc.CmdFollowUp, rpc.CmdAbort, rpc.CmdNewSession, rpc.CmdGetState, rpc.CmdSetModel, rpc.CmdCycleModel,
	rpc.CmdGetAvailableModels, rpc.CmdSetThinkingLevel, rpc.CmdCycleThinkingLevel, rpc.CmdSetSteeringMode, rpc.CmdSetFollowUpMode,
	rpc.CmdCompact, rpc.CmdSetAutoCompaction, rpc.CmdSetAutoRetry, rpc.CmdAbortRetry, rpc.CmdBash, rpc.CmdAbortBash, rpc.CmdGetSessionStats,
	rpc.CmdExportHTML, rpc.CmdSwitchSession, rpc.CmdFork, rpc.CmdClone, rpc.CmdGetForkMessages, rpc.CmdGetLastAssistantText,
	rpc.CmdSetSessionName, rpc.CmdGetMessages, rpc.CmdGetCommands, rpc.CmdApproveTool,
	rpc.CmdClearQueue, rpc.CmdGetAvailableThinkingLevels, rpc.CmdGetEntries, rpc.CmdGetTree,
}

// The parser serves exactly the documented command types.
func TestCommandFields_EveryDocumentedType(t *testing.T) {
	got, want := slices.Sorted(maps.Keys(commandFields)), slices.Sorted(slices.Values(commandTypes))
	if !slices.Equal(got, want) {
		t.Errorf("parsed types %v, documented %v", got, want)
	}
}
