package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"testing"
)

func TestRegistry(t *testing.T) {
	want := []string{"read", "write", "edit", "bash", "grep", "find", "ls"}
	if got := All(); !reflect.DeepEqual(got, want) {
		t.Fatalf("All() = %v, want %v", got, want)
	}
	for _, n := range want {
		if !Known(n) {
			t.Errorf("Known(%q) = false", n)
		}
	}
	if Known("delete") || Known("") {
		t.Error("Known accepts an unknown name")
	}
	readOnly := map[string]bool{"read": true, "grep": true, "find": true, "ls": true}
	for _, n := range append(want, "nope") {
		if SpecOf(n).ReadOnly != readOnly[n] {
			t.Errorf("SpecOf(%q).ReadOnly = %v", n, SpecOf(n).ReadOnly)
		}
	}
}

func TestSpecs(t *testing.T) {
	specs := Specs([]string{"ls", "nope", "bash", "read"})
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if !reflect.DeepEqual(names, []string{"ls", "bash", "read"}) {
		t.Fatalf("Specs order/skip: got %v", names)
	}

	// pi's parameter names and required sets.
	params := map[string]struct{ props, required []string }{
		"read":  {[]string{"limit", "offset", "path"}, []string{"path"}},
		"write": {[]string{"content", "path"}, []string{"path", "content"}},
		"edit":  {[]string{"newText", "oldText", "path"}, []string{"path", "oldText", "newText"}},
		"bash":  {[]string{"command", "timeout"}, []string{"command"}},
		"grep":  {[]string{"context", "glob", "ignoreCase", "limit", "literal", "path", "pattern"}, []string{"pattern"}},
		"find":  {[]string{"limit", "path", "pattern"}, []string{"pattern"}},
		"ls":    {[]string{"limit", "path"}, nil},
	}
	for _, s := range Specs(All()) {
		t.Run(s.Name, func(t *testing.T) {
			if s.Description == "" {
				t.Error("empty description")
			}
			var schema struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			}
			if err := json.Unmarshal(s.Parameters, &schema); err != nil {
				t.Fatalf("schema is not valid JSON: %v", err)
			}
			if schema.Type != "object" {
				t.Errorf("schema type %q", schema.Type)
			}
			var props []string
			for p, raw := range schema.Properties {
				props = append(props, p)
				var prop struct{ Type, Description string }
				if err := json.Unmarshal(raw, &prop); err != nil || prop.Type == "" || prop.Description == "" {
					t.Errorf("property %s lacks type or description: %s", p, raw)
				}
			}
			sort.Strings(props)
			want := params[s.Name]
			if !reflect.DeepEqual(props, want.props) {
				t.Errorf("properties %v, want %v", props, want.props)
			}
			if !reflect.DeepEqual(schema.Required, want.required) {
				t.Errorf("required %v, want %v", schema.Required, want.required)
			}
		})
	}
}

func TestRunArgumentErrors(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "hello\n"})
	o := Options{Workspace: ws}
	tests := []struct {
		name, tool, args string
		want             []string
	}{
		{"invalid JSON read", "read", `{"path": `, []string{"invalid arguments for read"}},
		{"invalid JSON bash", "bash", `{command: ls}`, []string{"invalid arguments for bash"}},
		{"not an object", "grep", `["x"]`, []string{"invalid arguments for grep", "JSON object"}},
		{"missing path", "read", `{}`, []string{"read", `"path"`}},
		{"missing args", "write", ``, []string{"write", `"path"`}},
		{"missing content", "write", `{"path":"b.txt"}`, []string{"write", `"content"`}},
		{"missing oldText", "edit", `{"path":"a.txt","newText":"x"}`, []string{"edit", `"oldText"`}},
		{"missing command", "bash", `{"command":"  "}`, []string{"bash", `"command"`}},
		{"missing pattern", "find", `{"path":"."}`, []string{"find", `"pattern"`}},
		{"wrong type", "read", `{"path": 42}`, []string{"read", `"path"`, "string"}},
		{"bad number", "read", `{"path":"a.txt","offset":"ten"}`, []string{"read", `"offset"`, "number"}},
		{"bad boolean", "grep", `{"pattern":"x","ignoreCase":"maybe"}`, []string{"grep", `"ignoreCase"`, "boolean"}},
		{"unknown tool", "delete", `{}`, []string{"Unknown tool", "delete"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mustErr(t, call(t, o, tc.tool, tc.args), tc.want...)
		})
	}
}

func TestRunLenientArguments(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "1\n2\n3\n4\n"})
	o := Options{Workspace: ws}
	// Quoted numbers, a leading "@", unknown extra fields.
	r := call(t, o, "read", `{"path":"@a.txt","offset":"2","limit":2,"extra":true}`)
	mustOK(t, r)
	if r.Content != "2\n3\n\n[1 more lines in file. Use offset=4 to continue.]" {
		t.Fatalf("got %q", r.Content)
	}
	// A parameter's name in another case is the parameter, as encoding/json reads it.
	if r := call(t, o, "read", `{"Path":"a.txt","LIMIT":1}`); r.IsError || r.Content != "1\n\n[3 more lines in file. Use offset=2 to continue.]" {
		t.Fatalf("got %+v", r)
	}
}

func TestRunCancelledContext(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "x"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tool := range All() {
		r := callCtx(t, ctx, Options{Workspace: ws}, tool, obj{"path": "a.txt", "command": "echo hi", "pattern": "x", "content": "y", "oldText": "x", "newText": "z"})
		mustErr(t, r, "aborted")
	}
	if got := readFile(t, ws+"/a.txt"); got != "x" {
		t.Fatalf("a cancelled call changed the file: %q", got)
	}
}

// The facts the workflow dispatches tool calls by (parallel groups,
// attempts, what a cut call means) come from here: the four read-only
// tools may run together and be retried; bash alone runs once.
func TestDispatchFacts(t *testing.T) {
	for _, name := range All() {
		wantRO := name == Read || name == Grep || name == Find || name == Ls
		s := SpecOf(name)
		if s.ReadOnly != wantRO {
			t.Errorf("SpecOf(%s).ReadOnly = %v, want %v", name, s.ReadOnly, wantRO)
		}
		if runsOnce := s.Attempts == 1; runsOnce != (name == Bash) {
			t.Errorf("SpecOf(%s) runs once: %v, want %v", name, runsOnce, name == Bash)
		}
	}
	if s := SpecOf("nosuch"); s.ReadOnly || s.Attempts == 1 {
		t.Error("an unknown tool has dispatch facts")
	}
}
