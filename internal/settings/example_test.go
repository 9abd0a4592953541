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
	want := defaultsFor(environment{lookup: env.lookup})
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
