package rpcserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/rpc"
	"github.com/durableagent/durableagent/workflows"
)

// command is a decoded, checked command line.
type command struct {
	id, typ string
	images  []agent.ContentBlock
	// enabled is the boolean field of the command (enabled, approved,
	// excludeFromContext).
	enabled bool
	// str holds the command's string fields by name (message,
	// streamingBehavior, customInstructions, provider, modelId, level,
	// mode, command, sessionPath, entryId, name, ...).
	str map[string]string
}

// parseError is a command line that cannot be served: its id (when one
// could be read) and command (the type, or rpc.ParseCommand) go in the
// error response.
type parseError struct {
	id, command, msg string
}

// jsonKind names the JSON types a field may have.
type jsonKind string

const (
	kindString jsonKind = "a string"
	kindBool   jsonKind = "a boolean"
	kindArray  jsonKind = "an array"
)

type fieldSpec struct {
	name     string
	kind     jsonKind
	required bool
}

// commandFields are the command types and the fields each accepts besides
// "id" and "type": those of the terminal agent's RpcCommand (so its RpcClient is
// served unchanged) and approve_tool's. A field that is not listed is
// rejected, so a typo such as {"type":"set_auto_retry","enable":false}
// fails loudly instead of doing something else.
var commandFields = map[string][]fieldSpec{
	rpc.CmdPrompt:                     {{"message", kindString, true}, {"images", kindArray, false}, {"streamingBehavior", kindString, false}},
	rpc.CmdSteer:                      {{"message", kindString, true}, {"images", kindArray, false}},
	rpc.CmdFollowUp:                   {{"message", kindString, true}, {"images", kindArray, false}},
	rpc.CmdAbort:                      nil,
	rpc.CmdNewSession:                 {{"parentSession", kindString, false}},
	rpc.CmdGetState:                   nil,
	rpc.CmdSetModel:                   {{"provider", kindString, true}, {"modelId", kindString, true}},
	rpc.CmdCycleModel:                 nil,
	rpc.CmdGetAvailableModels:         nil,
	rpc.CmdSetThinkingLevel:           {{"level", kindString, true}},
	rpc.CmdCycleThinkingLevel:         nil,
	rpc.CmdSetSteeringMode:            {{"mode", kindString, true}},
	rpc.CmdSetFollowUpMode:            {{"mode", kindString, true}},
	rpc.CmdCompact:                    {{"customInstructions", kindString, false}},
	rpc.CmdSetAutoCompaction:          {{"enabled", kindBool, true}},
	rpc.CmdSetAutoRetry:               {{"enabled", kindBool, true}},
	rpc.CmdAbortRetry:                 nil,
	rpc.CmdBash:                       {{"command", kindString, true}, {"excludeFromContext", kindBool, false}},
	rpc.CmdAbortBash:                  nil,
	rpc.CmdGetSessionStats:            nil,
	rpc.CmdExportHTML:                 {{"outputPath", kindString, false}},
	rpc.CmdSwitchSession:              {{"sessionPath", kindString, true}},
	rpc.CmdFork:                       {{"entryId", kindString, true}},
	rpc.CmdClone:                      nil,
	rpc.CmdGetForkMessages:            nil,
	rpc.CmdGetLastAssistantText:       nil,
	rpc.CmdSetSessionName:             {{"name", kindString, true}},
	rpc.CmdGetMessages:                nil,
	rpc.CmdGetCommands:                nil,
	rpc.CmdApproveTool:                {{"toolCallId", kindString, true}, {"approved", kindBool, true}, {"reason", kindString, false}, {"scope", kindString, false}},
	rpc.CmdClearQueue:                 nil,
	rpc.CmdGetAvailableThinkingLevels: nil,
	rpc.CmdGetEntries:                 {{"since", kindString, false}},
	rpc.CmdGetTree:                    nil,
}

// parseCommand decodes and checks one input line.
func parseCommand(line []byte) (command, *parseError) {
	if !utf8.Valid(line) {
		return command{}, &parseError{command: rpc.ParseCommand, msg: "Failed to parse command: line is not valid UTF-8"}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		if k := kindOf(bytes.TrimSpace(line)); k != "" && k != "an object" && json.Valid(line) {
			return command{}, &parseError{command: rpc.ParseCommand, msg: "Failed to parse command: a command must be a JSON object, got " + string(k)}
		}
		return command{}, &parseError{command: rpc.ParseCommand, msg: "Failed to parse command: invalid JSON: " + err.Error()}
	}
	if obj == nil {
		return command{}, &parseError{command: rpc.ParseCommand, msg: "Failed to parse command: a command must be a JSON object, got null"}
	}
	c := command{str: map[string]string{}}
	// The id first, so every later error can echo it.
	idErr := ""
	if raw, ok := obj["id"]; ok {
		if err := json.Unmarshal(raw, &c.id); err != nil || kindOf(raw) != kindString {
			c.id, idErr = "", fmt.Sprintf(`field "id" must be %s, got %s`, kindString, kindOf(raw))
		}
	}
	raw, ok := obj["type"]
	if !ok {
		return c, &parseError{id: c.id, command: rpc.ParseCommand, msg: `missing field "type" (one of ` + strings.Join(slices.Sorted(maps.Keys(commandFields)), ", ") + ")"}
	}
	if kindOf(raw) != kindString {
		return c, &parseError{id: c.id, command: rpc.ParseCommand, msg: fmt.Sprintf(`field "type" must be %s, got %s`, kindString, kindOf(raw))}
	}
	_ = json.Unmarshal(raw, &c.typ)
	fail := func(format string, args ...any) (command, *parseError) {
		return c, &parseError{id: c.id, command: c.typ, msg: fmt.Sprintf(format, args...)}
	}
	if idErr != "" {
		return fail("%s", idErr)
	}
	specs, known := commandFields[c.typ]
	if !known {
		// The terminal agent's words, so its clients recognise them.
		return fail("Unknown command: %s", c.typ)
	}
	if name := unknownField(obj, specs); name != "" {
		return fail("unknown field %q for %s (accepted: %s)", name, c.typ, fieldNames(specs))
	}
	for _, f := range specs {
		raw, ok := obj[f.name]
		if !ok || kindOf(raw) == "null" {
			if f.required {
				return fail("missing field %q (%s) for %s", f.name, f.kind, c.typ)
			}
			continue
		}
		if got := kindOf(raw); got != f.kind {
			return fail("field %q must be %s, got %s", f.name, f.kind, got)
		}
		var err error
		switch f.kind {
		case kindBool:
			err = json.Unmarshal(raw, &c.enabled)
		case kindArray:
			c.images, err = parseImages(raw)
		default:
			var v string
			err = json.Unmarshal(raw, &v)
			c.str[f.name] = v
		}
		if err != nil {
			return fail("field %q: %v", f.name, err)
		}
	}
	if msg := checkValues(c); msg != "" {
		return fail("%s", msg)
	}
	return c, nil
}

// checkValues checks what the field types do not: a non-empty message,
// command or id, and the allowed words of enumerations.
func checkValues(c command) string {
	switch c.typ {
	case rpc.CmdPrompt, rpc.CmdSteer, rpc.CmdFollowUp:
		if strings.TrimSpace(c.str["message"]) == "" {
			return `field "message" is empty`
		}
		if b := c.str["streamingBehavior"]; b != "" && b != rpc.StreamingSteer && b != rpc.StreamingFollowUp {
			return fmt.Sprintf(`field "streamingBehavior" is %q, want %q or %q`, b, rpc.StreamingSteer, rpc.StreamingFollowUp)
		}
		if err := workflows.CheckImages(c.images); err != nil {
			return err.Error()
		}
	case rpc.CmdSetThinkingLevel:
		if err := llm.CheckThinkingLevel(c.str["level"]); err != nil || c.str["level"] == "" {
			return fmt.Sprintf(`field "level" is %q, want one of %s`, c.str["level"], strings.Join(llm.ThinkingLevels, ", "))
		}
	case rpc.CmdSetSteeringMode, rpc.CmdSetFollowUpMode:
		if m := c.str["mode"]; m != agent.QueueModeAll && m != agent.QueueModeOneAtATime {
			return fmt.Sprintf(`field "mode" is %q, want %q or %q`, m, agent.QueueModeAll, agent.QueueModeOneAtATime)
		}
	}
	for _, name := range []string{"command", "sessionPath", "entryId", "toolCallId", "provider", "modelId"} {
		if v, ok := c.str[name]; ok && strings.TrimSpace(v) == "" {
			return fmt.Sprintf("field %q is empty", name)
		}
	}
	return ""
}

// parseImages reads the terminal agent's ImageContent list: objects
// {"type":"image","data":<base64>,"mimeType":...}.
func parseImages(raw json.RawMessage) ([]agent.ContentBlock, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]agent.ContentBlock, 0, len(items))
	for i, it := range items {
		if kindOf(it) != "an object" {
			return nil, fmt.Errorf("images[%d] must be an object {type, data, mimeType}, got %s", i, kindOf(it))
		}
		var img struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
		}
		if err := json.Unmarshal(it, &img); err != nil {
			return nil, fmt.Errorf("images[%d]: %v", i, err)
		}
		out = append(out, agent.ContentBlock{Type: img.Type, Data: img.Data, MimeType: img.MimeType})
	}
	return out, nil
}

// kindOf names the JSON type of a raw value, as error messages say it.
func kindOf(raw []byte) jsonKind {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		return kindString
	case 't', 'f':
		return kindBool
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "a number"
}

// unknownField is the first, by name, of obj's fields that specs do not
// list (the same one every time), "" when there is none.
func unknownField(obj map[string]json.RawMessage, specs []fieldSpec) string {
	first := ""
	for name := range obj {
		known := name == "id" || name == "type" || slices.ContainsFunc(specs, func(f fieldSpec) bool { return f.name == name })
		if !known && (first == "" || name < first) {
			first = name
		}
	}
	return first
}

func fieldNames(specs []fieldSpec) string {
	if len(specs) == 0 {
		return "none besides id and type"
	}
	names := make([]string, len(specs))
	for i, f := range specs {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}
