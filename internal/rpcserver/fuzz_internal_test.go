package rpcserver

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/durableagent/durableagent/agent"
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
		if !slices.Contains(commandTypes, c.Type) {
			t.Fatalf("parseCommand(%q) accepted unknown type %q", line, c.Type)
		}
		if (c.Type == rpc.CmdPrompt || c.Type == rpc.CmdSteer || c.Type == rpc.CmdFollowUp) && strings.TrimSpace(c.Message) == "" {
			t.Fatalf("parseCommand(%q) accepted a blank message", line)
		}
		// Round trip through the client's encoding of the same command.
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		again, perr := parseCommand(b)
		if perr != nil || !reflect.DeepEqual(normalized(again), normalized(c)) {
			t.Fatalf("round trip of %q through %s: %+v, %v; want %+v", line, b, again, perr, c)
		}
	})
}

// normalized drops what the client's encoding leaves out: an empty image
// list, and what an image block does not carry.
func normalized(c rpc.Command) rpc.Command {
	if len(c.Images) == 0 {
		c.Images = nil
	}
	for i, img := range c.Images {
		c.Images[i] = agent.ContentBlock{Type: img.Type, Data: img.Data, MimeType: img.MimeType}
	}
	return c
}

// commandTypes lists every command type of docs/rpc.md, in its order.
var commandTypes = []string{
	rpc.CmdPrompt, rpc.CmdSteer, rpc.CmdFollowUp, rpc.CmdAbort, rpc.CmdNewSession, rpc.CmdGetState, rpc.CmdSetModel, rpc.CmdCycleModel,
	rpc.CmdGetAvailableModels, rpc.CmdSetThinkingLevel, rpc.CmdCycleThinkingLevel, rpc.CmdSetSteeringMode, rpc.CmdSetFollowUpMode,
	rpc.CmdCompact, rpc.CmdSetAutoCompaction, rpc.CmdSetAutoRetry, rpc.CmdAbortRetry, rpc.CmdBash, rpc.CmdAbortBash, rpc.CmdGetSessionStats,
	rpc.CmdExportHTML, rpc.CmdSwitchSession, rpc.CmdFork, rpc.CmdClone, rpc.CmdGetForkMessages, rpc.CmdGetLastAssistantText,
	rpc.CmdSetSessionName, rpc.CmdGetMessages, rpc.CmdGetCommands, rpc.CmdApproveTool, rpc.CmdRewind,
	rpc.CmdClearQueue, rpc.CmdGetAvailableThinkingLevels, rpc.CmdGetEntries, rpc.CmdGetTree,
}

// The parser serves exactly the documented command types.
func TestCommands_EveryDocumentedType(t *testing.T) {
	got, want := slices.Sorted(maps.Keys(commands)), slices.Sorted(slices.Values(commandTypes))
	if !slices.Equal(got, want) {
		t.Errorf("parsed types %v, documented %v", got, want)
	}
}
