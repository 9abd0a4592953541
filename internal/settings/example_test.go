package settings

import (
	"reflect"
	"strings"
	"testing"
)

// `starter settings init` writes ExampleYAML; loading it gives Defaults().
func TestExampleYAML_LoadsBackToDefaults(t *testing.T) {
	env := newEnv(t, nil)
	file := writeYAML(t, ExampleYAML())
	s, err := load(t, file, env)
	if err != nil {
		t.Fatalf("load ExampleYAML: %v\n%s", err, ExampleYAML())
	}
	want := Defaults()
	want.file = file
	if !reflect.DeepEqual(s, want) {
		t.Errorf("loaded example = %+v\nwant %+v", s, want)
	}
}

func TestExampleYAML_ListsEveryKey(t *testing.T) {
	text := ExampleYAML()
	for _, k := range Keys() {
		last := k.Key[strings.LastIndex(k.Key, ".")+1:]
		if !strings.Contains(text, last+":") || !strings.Contains(text, k.Env) {
			t.Errorf("example lacks %s (or its variable %s)", k.Key, k.Env)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") || line == "" {
			continue
		}
		if !strings.Contains(line, ":") {
			t.Errorf("odd line %q", line)
		}
	}
}

// Issue 39 item 5: the file `starter settings init` writes sets nothing,
// so every value's origin stays the default (the layer that set it) and a
// worker that reads the file has no setting to warn about.
func TestExampleYAML_SetsNothing(t *testing.T) {
	newEnv(t, nil)
	file := writeYAML(t, ExampleYAML())
	_, vals, err := Explain(LoadOptions{File: file})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vals {
		if v.Kind != OriginDefault {
			t.Errorf("%s: origin %s, want default", v.Key, v.Origin)
		}
	}
	if lines := Unread(vals, "the worker", WorkerReads); len(lines) != 0 {
		t.Fatalf("the worker would warn %d lines, want none:\n%s", len(lines), strings.Join(lines, "\n"))
	}
}
