package settings

import (
	"strings"
	"testing"
)

// dev.log is a boolean: on the command line, in the environment and in the
// file; anything else is a one-line error naming the key and the value.
func TestDevLog_BoolAndBadValue(t *testing.T) {
	s, err := load(t, "", newEnv(t, nil), "--dev.log")
	if err != nil || !s.Dev.Log {
		t.Fatalf("--dev.log: %v, %+v", err, s.Dev)
	}
	if s, err := load(t, "", newEnv(t, nil)); err != nil || s.Dev.Log {
		t.Fatalf("default: %v, %+v", err, s.Dev)
	}
	for _, tc := range []struct {
		file string
		env  map[string]string
	}{
		{file: "dev:\n  log: loud\n"},
		{env: map[string]string{"DURABLE_AGENT_DEV_LOG": "loud"}},
	} {
		path := ""
		if tc.file != "" {
			path = writeYAML(t, tc.file)
		}
		_, err := load(t, path, newEnv(t, tc.env))
		if err == nil || !strings.Contains(err.Error(), "dev.log") || !strings.Contains(err.Error(), "loud") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("dev.log loud: %v", err)
		}
	}
}
