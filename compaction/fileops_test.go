package compaction

import (
	"encoding/json"
	"slices"
	"testing"
)

func call(name, args string) ToolCallRef {
	return ToolCallRef{ID: "id-" + name, Name: name, Arguments: json.RawMessage(args)}
}

func calls(tcs ...ToolCallRef) []Item {
	return []Item{{ID: "a", Role: RoleAssistant, ToolCalls: tcs}}
}

func TestFileOps_ReadAndModifiedListsDedupedSorted(t *testing.T) {
	tests := []struct {
		name           string
		items          []Item
		read, modified []string
	}{
		{"no tool calls", []Item{{Role: RoleUser, Text: "hi"}}, nil, nil},
		{"read tools and path arguments", calls(
			call("read", `{"path":"b.go"}`),
			call("read_file", `{"file_path":"a.go"}`),
			call("view", `{"file":"c.go"}`),
		), []string{"a.go", "b.go", "c.go"}, nil},
		{"modify tools", calls(
			call("write", `{"path":"w.go"}`),
			call("edit", `{"path":"e.go"}`),
			call("write_file", `{"file_path":"f.go"}`),
			call("apply_patch", `{"path":"p.go"}`),
		), nil, []string{"e.go", "f.go", "p.go", "w.go"}},
		{"duplicates across messages", append(calls(call("read", `{"path":"x.go"}`)), calls(call("read", `{"path":"x.go"}`), call("edit", `{"path":"y.go"}`), call("edit", `{"path":"y.go"}`))...),
			[]string{"x.go"}, []string{"y.go"}},
		{"read then modified is listed as modified only", calls(
			call("read", `{"path":"m.go"}`), call("edit", `{"path":"m.go"}`), call("read", `{"path":"r.go"}`),
		), []string{"r.go"}, []string{"m.go"}},
		{"tool names are case-insensitive", calls(call("Read", `{"path":"R.go"}`), call("Edit", `{"file_path":"E.go"}`)),
			[]string{"R.go"}, []string{"E.go"}},
		{"path is preferred over file_path and file", calls(call("read", `{"file":"z","file_path":"y","path":"x"}`)), []string{"x"}, nil},
		{"apply_patch headers when there is no path", calls(call("apply_patch",
			`{"input":"*** Begin Patch\n*** Update File: src/b.go\n@@\n-x\n+y\n*** Add File: src/a.go\n+z\n*** Delete File: old.go\n*** End Patch"}`)),
			nil, []string{"old.go", "src/a.go", "src/b.go"}},
		{"ignored: other tools, bad JSON, empty path, non-string path", calls(
			call("bash", `{"path":"ls.go"}`),
			call("read", `not json`),
			call("read", `{"path":"  "}`),
			call("edit", `{"path":42}`),
		), nil, nil},
		{"tool results are not calls", []Item{{Role: RoleToolResult, ToolName: "read", Text: `{"path":"q.go"}`}}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read, modified := FileOps(tt.items)
			if !slices.Equal(read, tt.read) || !slices.Equal(modified, tt.modified) {
				t.Errorf("FileOps() = %q, %q, want %q, %q", read, modified, tt.read, tt.modified)
			}
		})
	}
}

func TestFormatFileLists(t *testing.T) {
	tests := []struct {
		name           string
		read, modified []string
		want           string
	}{
		{"both", []string{"a", "b"}, []string{"c"}, "<read-files>\na\nb\n</read-files>\n<modified-files>\nc\n</modified-files>"},
		{"read only", []string{"a"}, nil, "<read-files>\na\n</read-files>"},
		{"modified only", nil, []string{"c"}, "<modified-files>\nc\n</modified-files>"},
		{"none", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FormatFileLists(tt.read, tt.modified); got != tt.want {
				t.Errorf("FormatFileLists() = %q, want %q", got, tt.want)
			}
		})
	}
}
