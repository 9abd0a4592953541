package rpcserver

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/durableagent/durableagent/rpc"
	"github.com/durableagent/durableagent/workflows"
)

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
	kindNumber jsonKind = "a number"
)

type fieldSpec struct {
	name     string
	kind     jsonKind
	required bool
}

// parseCommand decodes and checks one input line: its type must be in
// commands, and its fields those the type accepts, of their JSON types.
func parseCommand(line []byte) (rpc.Command, *parseError) {
	var c rpc.Command
	if !utf8.Valid(line) {
		return c, &parseError{command: rpc.ParseCommand, msg: "Failed to parse command: line is not valid UTF-8"}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		if k := kindOf(bytes.TrimSpace(line)); k != "" && k != "an object" && json.Valid(line) {
			return c, &parseError{command: rpc.ParseCommand, msg: "Failed to parse command: a command must be a JSON object, got " + string(k)}
		}
		return c, &parseError{command: rpc.ParseCommand, msg: "Failed to parse command: invalid JSON: " + err.Error()}
	}
	if obj == nil {
		return c, &parseError{command: rpc.ParseCommand, msg: "Failed to parse command: a command must be a JSON object, got null"}
	}
	// The id first, so every later error can echo it.
	id, idErr := "", ""
	if raw, ok := obj["id"]; ok {
		if err := json.Unmarshal(raw, &id); err != nil || kindOf(raw) != kindString {
			id, idErr = "", fmt.Sprintf(`field "id" must be %s, got %s`, kindString, kindOf(raw))
		}
	}
	raw, ok := obj["type"]
	if !ok {
		return c, &parseError{id: id, command: rpc.ParseCommand, msg: `missing field "type" (one of ` + strings.Join(slices.Sorted(maps.Keys(commands)), ", ") + ")"}
	}
	if kindOf(raw) != kindString {
		return c, &parseError{id: id, command: rpc.ParseCommand, msg: fmt.Sprintf(`field "type" must be %s, got %s`, kindString, kindOf(raw))}
	}
	var typ string
	_ = json.Unmarshal(raw, &typ)
	fail := func(format string, args ...any) (rpc.Command, *parseError) {
		return c, &parseError{id: id, command: typ, msg: fmt.Sprintf(format, args...)}
	}
	if idErr != "" {
		return fail("%s", idErr)
	}
	spec, known := commands[typ]
	if !known {
		// The terminal agent's words, so its clients recognise them.
		return fail("Unknown command: %s", typ)
	}
	if name := unknownField(obj, spec.fields); name != "" {
		return fail("unknown field %q for %s (accepted: %s)", name, typ, fieldNames(spec.fields))
	}
	for _, f := range spec.fields {
		raw, ok := obj[f.name]
		if !ok || kindOf(raw) == "null" {
			if f.required {
				return fail("missing field %q (%s) for %s", f.name, f.kind, typ)
			}
			continue
		}
		if got := kindOf(raw); got != f.kind {
			return fail("field %q must be %s, got %s", f.name, f.kind, got)
		}
		if f.kind == kindArray {
			var items []json.RawMessage
			_ = json.Unmarshal(raw, &items)
			for i, it := range items {
				if kindOf(it) != "an object" {
					return fail("field %q: images[%d] must be an object {type, data, mimeType}, got %s", f.name, i, kindOf(it))
				}
			}
		}
	}
	// Every field is known and of its type: the line is an rpc.Command.
	if err := json.Unmarshal(line, &c); err != nil {
		return fail("%v", err)
	}
	c.ID, c.Type = id, typ
	if msg := checkValues(obj, c); msg != "" {
		return fail("%s", msg)
	}
	return c, nil
}

// checkValues checks what the field types do not: a non-empty message,
// command or id, and a prompt's streamingBehavior and images (a thinking
// level and a queue mode are the client session's to check).
func checkValues(obj map[string]json.RawMessage, c rpc.Command) string {
	switch c.Type {
	case rpc.CmdPrompt, rpc.CmdSteer, rpc.CmdFollowUp:
		if strings.TrimSpace(c.Message) == "" {
			return `field "message" is empty`
		}
		if b := c.StreamingBehavior; b != "" && b != rpc.StreamingSteer && b != rpc.StreamingFollowUp {
			return fmt.Sprintf(`field "streamingBehavior" is %q, want %q or %q`, b, rpc.StreamingSteer, rpc.StreamingFollowUp)
		}
		if err := workflows.CheckImages(c.Images); err != nil {
			return err.Error()
		}
	}
	for _, f := range []struct{ name, v string }{{"command", c.Command}, {"sessionPath", c.SessionPath}, {"entryId", c.EntryID},
		{"toolCallId", c.ToolCallID}, {"provider", c.Provider}, {"modelId", c.ModelID}} {
		if _, ok := obj[f.name]; ok && strings.TrimSpace(f.v) == "" {
			return fmt.Sprintf("field %q is empty", f.name)
		}
	}
	return ""
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
	return kindNumber
}

// unknownField is the first, by name, of obj's fields that specs do not
// list (the same one every time), "" when there is none.
func unknownField(obj map[string]json.RawMessage, specs []fieldSpec) string {
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		if name != "id" && name != "type" && !slices.ContainsFunc(specs, func(f fieldSpec) bool { return f.name == name }) {
			return name
		}
	}
	return ""
}

func fieldNames(specs []fieldSpec) string {
	var names []string
	for _, f := range specs {
		names = append(names, f.name)
	}
	return cmp.Or(strings.Join(names, ", "), "none besides id and type")
}
