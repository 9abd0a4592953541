package compaction

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Tool names (compared case-insensitively) whose calls read or change a
// file. They cover the project's tools and the common names other agents
// use for the same operations.
var (
	readTools   = []string{"read", "read_file", "view"}
	modifyTools = []string{"write", "edit", "write_file", "apply_patch"}
	// pathArgs are the argument names that carry the file's path, in the
	// order they are tried.
	pathArgs = []string{"path", "file_path", "file"}
	// patchHeaders start the lines of an apply_patch body that name a
	// file, for patch tools that take no path argument.
	patchHeaders = []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}
)

// FileOps lists the files the items' assistant tool calls read and
// modified, each sorted and without duplicates. A file that was both read
// and modified is listed under modified only: what changed is what a
// summary must not lose. Calls whose arguments are not a JSON object, or
// name no path, are ignored.
func FileOps(items []Item) (read, modified []string) {
	readSet, modSet := map[string]bool{}, map[string]bool{}
	for _, it := range items {
		if it.Role != RoleAssistant {
			continue
		}
		for _, tc := range it.ToolCalls {
			name := strings.ToLower(tc.Name)
			switch {
			case slices.Contains(readTools, name):
				for _, p := range callPaths(tc) {
					readSet[p] = true
				}
			case slices.Contains(modifyTools, name):
				for _, p := range callPaths(tc) {
					modSet[p] = true
				}
			}
		}
	}
	for p := range readSet {
		if !modSet[p] {
			read = append(read, p)
		}
	}
	slices.Sort(read)
	return read, slices.Sorted(maps.Keys(modSet))
}

// callPaths is the file path a tool call names: its first non-empty path
// argument, or else the file headers of a patch passed as "input" or
// "patch" (apply_patch's usual shape).
func callPaths(tc ToolCallRef) []string {
	var args map[string]any
	if json.Unmarshal(tc.Arguments, &args) != nil {
		return nil
	}
	for _, key := range pathArgs {
		if p, ok := args[key].(string); ok && strings.TrimSpace(p) != "" {
			return []string{strings.TrimSpace(p)}
		}
	}
	var paths []string
	for _, key := range []string{"input", "patch"} {
		body, _ := args[key].(string)
		for line := range strings.Lines(body) {
			for _, h := range patchHeaders {
				if p, ok := strings.CutPrefix(line, h); ok && strings.TrimSpace(p) != "" {
					paths = append(paths, strings.TrimSpace(p))
				}
			}
		}
	}
	return paths
}
