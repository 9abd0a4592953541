package rpcserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/durableagent/durableagent/rpc"
)

// command is a decoded, checked command line.
type command struct {
	id                 string
	typ                string
	message            string
	enabled            bool
	customInstructions string
}

// parseError is a command line that cannot be served: its id (when one
// could be read) and command (the type, or rpc.ParseCommand) go in the
// error response.
type parseError struct {
	id, command, msg string
}

func (e *parseError) Error() string { return e.command + ": " + e.msg }

// jsonKind names the JSON types a field may have.
type jsonKind string

const (
	kindString jsonKind = "a string"
	kindBool   jsonKind = "a boolean"
)

type fieldSpec struct {
	name     string
	kind     jsonKind
	required bool
}

// commandFields are the fields each command type accepts besides "id" and
// "type". A field that is not listed is rejected, so a typo such as
// {"type":"set_auto_retry","enable":false} fails loudly instead of doing
// something else.
var commandFields = map[string][]fieldSpec{
	rpc.CmdPrompt:               {{"message", kindString, true}},
	rpc.CmdAbort:                nil,
	rpc.CmdAbortRetry:           nil,
	rpc.CmdSetAutoRetry:         {{"enabled", kindBool, true}},
	rpc.CmdGetState:             nil,
	rpc.CmdGetMessages:          nil,
	rpc.CmdGetLastAssistantText: nil,
	rpc.CmdCompact:              {{"customInstructions", kindString, false}},
	rpc.CmdSetAutoCompaction:    {{"enabled", kindBool, true}},
}

// parseCommand decodes and checks one input line.
func parseCommand(line []byte) (command, *parseError) {
	if !utf8.Valid(line) {
		return command{}, &parseError{command: rpc.ParseCommand, msg: "line is not valid UTF-8"}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		if k := kindOf(bytes.TrimSpace(line)); k != "" && k != "an object" && json.Valid(line) {
			return command{}, &parseError{command: rpc.ParseCommand, msg: "a command must be a JSON object, got " + string(k)}
		}
		return command{}, &parseError{command: rpc.ParseCommand, msg: "invalid JSON: " + err.Error()}
	}
	if obj == nil {
		return command{}, &parseError{command: rpc.ParseCommand, msg: "a command must be a JSON object, got null"}
	}
	var c command
	// The id first, so every later error can echo it.
	idErr := ""
	if raw, ok := obj["id"]; ok {
		if err := json.Unmarshal(raw, &c.id); err != nil || kindOf(raw) != kindString {
			c.id, idErr = "", fmt.Sprintf(`field "id" must be %s, got %s`, kindString, kindOf(raw))
		}
	}
	raw, ok := obj["type"]
	if !ok {
		return c, &parseError{id: c.id, command: rpc.ParseCommand, msg: `missing field "type" (one of ` + strings.Join(rpc.CommandTypes, ", ") + ")"}
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
		return fail("unknown command type %q (known: %s)", c.typ, strings.Join(rpc.CommandTypes, ", "))
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
		switch f.name {
		case "message":
			err = json.Unmarshal(raw, &c.message)
		case "enabled":
			err = json.Unmarshal(raw, &c.enabled)
		case "customInstructions":
			err = json.Unmarshal(raw, &c.customInstructions)
		}
		if err != nil {
			return fail("field %q: %v", f.name, err)
		}
	}
	if c.typ == rpc.CmdPrompt && strings.TrimSpace(c.message) == "" {
		return fail(`field "message" is empty`)
	}
	return c, nil
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

func unknownField(obj map[string]json.RawMessage, specs []fieldSpec) string {
	var names []string
	for name := range obj {
		if name == "id" || name == "type" {
			continue
		}
		found := false
		for _, f := range specs {
			found = found || f.name == name
		}
		if !found {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names) // report the same one every time
	return names[0]
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
