package settings

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SPEC 8: invalid values (negative, non-numeric, unknown keys, wrong types,
// bad YAML) are rejected at start with one line naming the key and value.
func TestLoad_InvalidInputRejectedWithKeyAndValue(t *testing.T) {
	aFile := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(aFile, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "absent.yaml")
	cases := []struct {
		name string
		file string // YAML content; "" for no file
		env  map[string]string
		args []string
		// want are substrings of the message: the key, the value, the rule
		// and where the value came from.
		want []string
		// notWant must not appear (values of unknown keys may be secrets).
		notWant string
	}{
		{name: "negative maxRetries in file", file: "retry:\n  maxRetries: -1\n",
			want: []string{`retry.maxRetries: must be a whole number >= 0, got "-1"`, "settings.yaml:2"}},
		{name: "non-numeric maxRetries in file", file: "retry:\n  maxRetries: abc\n",
			want: []string{"retry.maxRetries", `"abc"`, "whole number"}},
		{name: "fractional maxRetries", file: "retry:\n  maxRetries: 3.5\n",
			want: []string{"retry.maxRetries", `"3.5"`, "whole number"}},
		{name: "huge maxRetries", file: "retry:\n  maxRetries: 500\n",
			want: []string{"retry.maxRetries", `"500"`, "at most 100"}},
		{name: "maxRetries overflowing int64", file: "retry:\n  maxRetries: 99999999999999999999\n",
			want: []string{"retry.maxRetries", `"99999999999999999999"`}},
		{name: "baseDelayMs above one hour", file: "retry:\n  baseDelayMs: 7200000\n",
			want: []string{"retry.baseDelayMs", `"7200000"`, "at most 3600000 (1 hour)"}},
		{name: "maxDelayMs above 24 hours", file: "retry:\n  maxDelayMs: 100000000\n",
			want: []string{"retry.maxDelayMs", `"100000000"`, "24 hours"}},
		{name: "bool that is maybe", file: "retry:\n  enabled: maybe\n",
			want: []string{`retry.enabled: must be true or false, got "maybe"`}},
		{name: "bool given a list", file: "retry:\n  enabled: [true]\n",
			want: []string{"retry.enabled", "must be true or false, found a list"}},
		{name: "number given a mapping", file: "retry:\n  maxRetries: {a: 1}\n",
			want: []string{"retry.maxRetries", "mapping"}},
		{name: "null number", file: "retry:\n  maxRetries:\n",
			want: []string{"retry.maxRetries", `got ""`}},
		{name: "unknown key with suggestion", file: "retry:\n  maxRetry: 3\n",
			want: []string{`unknown key "retry.maxRetry"`, "settings.yaml:2", "did you mean retry.maxRetries?"}},
		{name: "unknown group with suggestion", file: "retyr:\n  maxRetries: 3\n",
			want: []string{`unknown key "retyr"`, "did you mean retry?"}},
		{name: "key at the wrong level", file: "maxRetries: 3\n",
			want: []string{`unknown key "maxRetries"`, "did you mean retry.maxRetries?"}},
		{name: "key in the wrong case", file: "retry:\n  maxretries: 3\n",
			want: []string{`unknown key "retry.maxretries"`, "did you mean retry.maxRetries?"}},
		{name: "unknown key value not echoed", file: "model:\n  apiKey: sk-ant-secret\n",
			want: []string{`unknown key "model.apiKey"`}, notWant: "sk-ant-secret"},
		{name: "group given a scalar", file: "retry: 5\n",
			want: []string{"retry: must be a group of retry.* keys", `"5"`}},
		{name: "bad YAML names file and line", file: "retry:\n  maxRetries: 3\n bad: [\n",
			want: []string{"bad YAML in", "settings.yaml", "line"}},
		{name: "top level not a mapping", file: "- retry\n",
			want: []string{"settings.yaml:1", "top level must be a mapping"}},
		{name: "duplicate key nested and flat", file: "retry.maxRetries: 4\nretry:\n  maxRetries: 5\n",
			want: []string{`duplicate key "retry.maxRetries"`, "first at line 1"}},
		{name: "empty temporal.address", file: "temporal:\n  address: \"\"\n",
			want: []string{"temporal.address: must not be empty"}},
		{name: "temporal.address without port", file: "temporal:\n  address: myhost\n",
			want: []string{"temporal.address", `"myhost"`, "host:port"}},
		{name: "unknown model.provider", file: "model:\n  provider: gemini\n",
			want: []string{"model.provider", `"gemini"`, "one of scripted, anthropic, openai"}},
		{name: "zero contextWindow", file: "model:\n  contextWindow: 0\n",
			want: []string{"model.contextWindow", `"0"`, ">= 1"}},
		{name: "reserveTokens not below contextWindow", file: "compaction:\n  reserveTokens: 200000\n",
			want: []string{"compaction.reserveTokens", `"200000"`, "less than model.contextWindow (200000)", "settings.yaml:2"}},
		{name: "maxTokens above contextWindow", file: "model:\n  contextWindow: 30000\n  maxTokens: 40000\n",
			want: []string{"model.maxTokens", `"40000"`, "model.contextWindow (30000)"}},
		{name: "heartbeatTimeoutMs below one second", file: "model:\n  heartbeatTimeoutMs: 500\n",
			want: []string{"model.heartbeatTimeoutMs", `"500"`, ">= 1000"}},
		{name: "heartbeat above start-to-close", file: "model:\n  timeoutMs: 10000\n  heartbeatTimeoutMs: 20000\n",
			want: []string{"model.heartbeatTimeoutMs", `"20000"`, "model.timeoutMs (10000)"}},
		{name: "baseUrl not http", file: "model:\n  baseUrl: ftp://example.test\n",
			want: []string{"model.baseUrl", `"ftp://example.test"`}},
		{name: "port out of range", file: "dev:\n  port: 70000\n",
			want: []string{"dev.port", `"70000"`, "at most 65535"}},
		{name: "ui port equals frontend port", file: "dev:\n  uiPort: 7233\n",
			want: []string{"dev.uiPort", `"7233"`, "differ from dev.port"}},
		{name: "dev.ip not an IP", file: "dev:\n  ip: localhost\n",
			want: []string{"dev.ip", `"localhost"`, "IP address"}},
		{name: "faults given a scalar", file: "scripted:\n  faults: \"503\"\n",
			want: []string{"scripted.faults", "list of strings"}},
		{name: "bad fault in file", file: "scripted:\n  faults: [ok, \"hang:soon\"]\n",
			want: []string{"scripted.faults[1]", "hang:soon"}},
		{name: "fallbackModels given a scalar", file: "retry:\n  fallbackModels: claude-b\n",
			want: []string{"retry.fallbackModels", "list of strings"}},
		{name: "empty fallback model in file", file: "retry:\n  fallbackModels: [claude-b, \"\"]\n",
			want: []string{`retry.fallbackModels[1]: must not be empty, got ""`, "settings.yaml:2"}},
		{name: "empty fallback model in env", env: map[string]string{"DURABLE_AGENT_RETRY_FALLBACKMODELS": "gpt-b;;gpt-c"},
			want: []string{"retry.fallbackModels[1]: must not be empty", "environment DURABLE_AGENT_RETRY_FALLBACKMODELS"}},
		{name: "duplicate fallback model in env", env: map[string]string{"DURABLE_AGENT_RETRY_FALLBACKMODELS": "gpt-b;gpt-c; gpt-b"},
			want: []string{`retry.fallbackModels[2]: repeats retry.fallbackModels[0], got "gpt-b"`, "environment DURABLE_AGENT_RETRY_FALLBACKMODELS"}},
		{name: "more than ten fallback models in a flag", args: []string{"--retry.fallbackModels=m1;m2;m3;m4;m5;m6;m7;m8;m9;m10;m11"},
			want: []string{"retry.fallbackModels: must hold at most 10 items, has 11 (from flag --retry.fallbackModels"}},
		{name: "dataDir is a file", env: map[string]string{"DURABLE_AGENT_DATADIR": aFile},
			want: []string{"dataDir", aFile, "not a file", "DURABLE_AGENT_DATADIR"}},
		{name: "negative maxRetries in env", env: map[string]string{"DURABLE_AGENT_RETRY_MAXRETRIES": "-1"},
			want: []string{`retry.maxRetries: must be a whole number >= 0, got "-1"`, "environment DURABLE_AGENT_RETRY_MAXRETRIES"}},
		{name: "non-numeric baseDelayMs in env", env: map[string]string{"DURABLE_AGENT_RETRY_BASEDELAYMS": "2s"},
			want: []string{"retry.baseDelayMs", `"2s"`}},
		{name: "bad bool in env", env: map[string]string{"DURABLE_AGENT_RETRY_ENABLED": "yes please"},
			want: []string{"retry.enabled", `"yes please"`}},
		{name: "zero contextWindow in env", env: map[string]string{"DURABLE_AGENT_MODEL_CONTEXTWINDOW": "0"},
			want: []string{"model.contextWindow", `"0"`}},
		{name: "bad fault in env", env: map[string]string{"DURABLE_AGENT_SCRIPTED_FAULTS": "ok;[503 oops"},
			want: []string{"scripted.faults[1]", "[503 oops", "DURABLE_AGENT_SCRIPTED_FAULTS"}},
		{name: "unknown env variable with suggestion", env: map[string]string{"DURABLE_AGENT_RETRY_MAXRETRY": "sk-secret"},
			want: []string{"unknown environment variable DURABLE_AGENT_RETRY_MAXRETRY", "did you mean DURABLE_AGENT_RETRY_MAXRETRIES?"}, notWant: "sk-secret"},
		{name: "snake-cased env variable", env: map[string]string{"DURABLE_AGENT_RETRY_MAX_RETRIES": "3"},
			want: []string{"DURABLE_AGENT_RETRY_MAX_RETRIES", "did you mean DURABLE_AGENT_RETRY_MAXRETRIES?"}},
		{name: "bad TEMPORAL_ADDRESS", env: map[string]string{"TEMPORAL_ADDRESS": "nohost"},
			want: []string{"temporal.address", `"nohost"`, "environment TEMPORAL_ADDRESS"}},
		{name: "negative maxRetries flag", args: []string{"--retry.maxRetries=-1"},
			want: []string{`retry.maxRetries: must be a whole number >= 0, got "-1"`, "flag --retry.maxRetries"}},
		{name: "bad bool flag", args: []string{"--retry.enabled=maybe"},
			want: []string{"retry.enabled", `"maybe"`, "flag --retry.enabled"}},
		{name: "non-numeric flag", args: []string{"--compaction.keepRecentTokens", "lots"},
			want: []string{"compaction.keepRecentTokens", `"lots"`}},
		{name: "bad flag beats a good file", file: "retry:\n  maxRetries: 2\n", args: []string{"--retry.maxRetries=x"},
			want: []string{"retry.maxRetries", `"x"`, "flag"}},
		{name: "negative callsPerSecond in env", env: map[string]string{"DURABLE_AGENT_MODEL_CALLSPERSECOND": "-2"},
			want: []string{"model.callsPerSecond", `"-2"`, "calls per second", "DURABLE_AGENT_MODEL_CALLSPERSECOND"}},
		{name: "negative maxConcurrentCalls flag", args: []string{"--model.maxConcurrentCalls=-1"},
			want: []string{"model.maxConcurrentCalls", `"-1"`, "flag --model.maxConcurrentCalls"}},
		{name: "missing --config file", args: []string{"--config", missing},
			want: []string{missing, "does not exist", "flag --config"}},
		{name: "missing DURABLE_AGENT_CONFIG file", env: map[string]string{EnvConfig: missing},
			want: []string{missing, "does not exist", EnvConfig}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := ""
			if c.file != "" {
				path = writeYAML(t, c.file)
			}
			_, err := load(t, path, newEnv(t, c.env), c.args...)
			if err == nil {
				t.Fatalf("Load succeeded, want an error containing %q", c.want)
			}
			msg := err.Error()
			var se *Error
			if !errors.As(err, &se) {
				t.Errorf("error %T is not *Error: %v", err, err)
			}
			if !strings.HasPrefix(msg, "settings: ") || strings.ContainsAny(msg, "\r\n") {
				t.Errorf("message is not one line starting with \"settings: \": %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not contain %q", msg, w)
				}
			}
			if c.notWant != "" && strings.Contains(msg, c.notWant) {
				t.Errorf("message %q echoes %q", msg, c.notWant)
			}
		})
	}
}

// Validate alone (no sources) names key and value too.
func TestValidate_RejectsOutOfRangeStruct(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Settings)
		want   string
	}{
		{"negative maxRetries", func(s *Settings) { s.Retry.MaxRetries = -1 }, `settings: retry.maxRetries: must be a whole number >= 0, got "-1"`},
		{"negative baseDelayMs", func(s *Settings) { s.Retry.BaseDelayMs = -5 }, `settings: retry.baseDelayMs: must be a whole number >= 0, got "-5"`},
		{"empty address", func(s *Settings) { s.Temporal.Address = "" }, `settings: temporal.address: must not be empty, got ""`},
		{"unknown provider", func(s *Settings) { s.Model.Provider = "x" }, `settings: model.provider: must be one of scripted, anthropic, openai, got "x"`},
		{"reserve over window", func(s *Settings) { s.Model.ContextWindow = 10000 }, `settings: compaction.reserveTokens: must be less than model.contextWindow (10000), got "16384"`},
		{"duplicate fallback model", func(s *Settings) { s.Retry.FallbackModels = []string{"claude-b", "claude-b"} }, `settings: retry.fallbackModels[1]: repeats retry.fallbackModels[0], got "claude-b"`},
		{"blank fallback model", func(s *Settings) { s.Retry.FallbackModels = []string{" "} }, `settings: retry.fallbackModels[0]: must not be empty, got " "`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Defaults()
			c.mutate(&s)
			err := s.Validate()
			if err == nil || err.Error() != c.want {
				t.Errorf("Validate() = %v, want %q", err, c.want)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	names := allNames()
	cases := []struct{ in, want string }{
		{"retry.maxRetry", "retry.maxRetries"},
		{"retry.maxretries", "retry.maxRetries"},
		{"heartbeatTimeoutMs", "model.heartbeatTimeoutMs"},
		{"comapction", "compaction"},
		{"enabled", ""}, // in three groups: no guess
		{"something.else", ""},
	}
	for _, c := range cases {
		if got := Suggest(c.in, names); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
