package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// SPEC 4 and 9: the defaults are the original's.
func TestSettings_DefaultsMatchSpec(t *testing.T) {
	d := Defaults()
	checks := []struct {
		name      string
		got, want any
	}{
		{"retry.enabled", d.Retry.Enabled, true},
		{"retry.maxRetries", d.Retry.MaxRetries, 3},
		{"retry.baseDelayMs", d.Retry.BaseDelayMs, int64(2000)},
		{"retry.respectRetryAfter", d.Retry.RespectRetryAfter, false},
		{"retry.maxDelayMs", d.Retry.MaxDelayMs, int64(0)},
		{"retry.fallbackModels", len(d.Retry.FallbackModels), 0},
		{"compaction.enabled", d.Compaction.Enabled, true},
		{"compaction.reserveTokens", d.Compaction.ReserveTokens, 16384},
		{"compaction.keepRecentTokens", d.Compaction.KeepRecentTokens, 20000},
		{"compaction.autoContinue", d.Compaction.AutoContinue, true},
		{"temporal.address", d.Temporal.Address, "127.0.0.1:7233"},
		{"temporal.namespace", d.Temporal.Namespace, "default"},
		{"temporal.taskQueue", d.Temporal.TaskQueue, "durable-agent"},
		{"model.provider", d.Model.Provider, "scripted"},
		{"model.name", d.Model.Name, "scripted-1"},
		{"model.contextWindow", d.Model.ContextWindow, 200000},
		{"model.maxTokens", d.Model.MaxTokens, 4096},
		{"model.timeoutMs", d.Model.TimeoutMs, int64(600000)},
		{"model.heartbeatTimeoutMs", d.Model.HeartbeatTimeoutMs, int64(20000)},
		{"scripted.faults", len(d.Scripted.Faults), 0},
		{"dev.ip", d.Dev.IP, "127.0.0.1"},
		{"dev.port", d.Dev.Port, 7233},
		{"dev.uiPort", d.Dev.UIPort, 8233},
		{"dev.ui", d.Dev.UI, true},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if err := d.Validate(); err != nil {
		t.Errorf("Defaults().Validate() = %v", err)
	}
}

func TestSettings_DefaultDataDir(t *testing.T) {
	home := t.TempDir()
	cases := []struct {
		name string
		env  fakeEnv
		want string
	}{
		{"home dir", fakeEnv{"HOME": home}, filepath.Join(home, ".durable-agent")},
		{"DURABLE_AGENT_HOME", fakeEnv{"HOME": home, EnvHome: "/srv/agent"}, "/srv/agent"},
		{"DURABLE_AGENT_HOME with tilde", fakeEnv{"HOME": home, EnvHome: "~/agent"}, filepath.Join(home, "agent")},
		{"empty DURABLE_AGENT_HOME is unset", fakeEnv{"HOME": home, EnvHome: ""}, filepath.Join(home, ".durable-agent")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			s, err := Load(LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if s.DataDir != c.want {
				t.Errorf("DataDir = %q, want %q", s.DataDir, c.want)
			}
			if s.File() != filepath.Join(c.want, FileName) {
				t.Errorf("File() = %q, want it in %q", s.File(), c.want)
			}
		})
	}
}

func TestLoad_NoSourcesGivesDefaults(t *testing.T) {
	env := newEnv(t, nil)
	s, err := load(t, "", env)
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.file = s.file
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Load() = %+v\nwant %+v", s, want)
	}
}

// SPEC 8: one schema, three sources; flags > env > file > defaults, key by key.
func TestLoad_PrecedenceFlagsOverEnvOverFileOverDefaults(t *testing.T) {
	file := "retry:\n  maxRetries: 5\n  enabled: false\n  baseDelayMs: 100\n"
	cases := []struct {
		name        string
		file        string
		env         map[string]string
		args        []string
		wantRetries int
		wantEnabled bool
		wantDelay   int64
	}{
		{"defaults only", "", nil, nil, 3, true, 2000},
		{"file over defaults", file, nil, nil, 5, false, 100},
		{"env over file", file, map[string]string{"DURABLE_AGENT_RETRY_MAXRETRIES": "6"}, nil, 6, false, 100},
		{"flag over env and file", file, map[string]string{"DURABLE_AGENT_RETRY_MAXRETRIES": "6"}, []string{"--retry.maxRetries=7"}, 7, false, 100},
		{"env over defaults", "", map[string]string{"DURABLE_AGENT_RETRY_ENABLED": "false"}, nil, 3, false, 2000},
		{"flag over defaults", "", nil, []string{"--retry.baseDelayMs", "50"}, 3, true, 50},
		{"bare bool flag over file", file, nil, []string{"--retry.enabled"}, 5, true, 100},
		{"flag false over env true", "", map[string]string{"DURABLE_AGENT_RETRY_ENABLED": "true"}, []string{"--retry.enabled=false"}, 3, false, 2000},
		{"empty env variable counts as unset", file, map[string]string{"DURABLE_AGENT_RETRY_MAXRETRIES": ""}, nil, 5, false, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := ""
			if c.file != "" {
				path = writeYAML(t, c.file)
			}
			s, err := load(t, path, newEnv(t, c.env), c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if s.Retry.MaxRetries != c.wantRetries || s.Retry.Enabled != c.wantEnabled || s.Retry.BaseDelayMs != c.wantDelay {
				t.Errorf("retry = %+v, want maxRetries %d enabled %v baseDelayMs %d", s.Retry, c.wantRetries, c.wantEnabled, c.wantDelay)
			}
			if s.Compaction.ReserveTokens != 16384 {
				t.Errorf("untouched key changed: compaction.reserveTokens = %d", s.Compaction.ReserveTokens)
			}
		})
	}
}

func TestLoad_TemporalEnvironmentHonoured(t *testing.T) {
	cases := []struct {
		name          string
		file          string
		env           map[string]string
		args          []string
		wantAddress   string
		wantNamespace string
	}{
		{"TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE", "", map[string]string{"TEMPORAL_ADDRESS": "temporal:7233", "TEMPORAL_NAMESPACE": "agents"}, nil, "temporal:7233", "agents"},
		{"TEMPORAL_ADDRESS over file", "temporal:\n  address: file:7233\n", map[string]string{"TEMPORAL_ADDRESS": "env:7233"}, nil, "env:7233", "default"},
		{"DURABLE_AGENT_ variable wins", "", map[string]string{"TEMPORAL_ADDRESS": "std:7233", "DURABLE_AGENT_TEMPORAL_ADDRESS": "ours:7233"}, nil, "ours:7233", "default"},
		{"flag over TEMPORAL_ADDRESS", "", map[string]string{"TEMPORAL_ADDRESS": "std:7233"}, []string{"--temporal.address=flag:7233"}, "flag:7233", "default"},
		{"empty TEMPORAL_ADDRESS is unset", "", map[string]string{"TEMPORAL_ADDRESS": ""}, nil, "127.0.0.1:7233", "default"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := ""
			if c.file != "" {
				path = writeYAML(t, c.file)
			}
			s, err := load(t, path, newEnv(t, c.env), c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if s.Temporal.Address != c.wantAddress || s.Temporal.Namespace != c.wantNamespace {
				t.Errorf("temporal = %+v, want address %q namespace %q", s.Temporal, c.wantAddress, c.wantNamespace)
			}
		})
	}
}

func TestLoad_FileLocation(t *testing.T) {
	dataDir := t.TempDir()
	inDataDir := filepath.Join(dataDir, FileName)
	if err := os.WriteFile(inDataDir, []byte("retry:\n  maxRetries: 11\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	named := writeYAML(t, "retry:\n  maxRetries: 12\n")
	cases := []struct {
		name        string
		opt         string
		env         map[string]string
		args        []string
		wantFile    string
		wantRetries int
	}{
		{"DURABLE_AGENT_HOME holds the default file", "", map[string]string{EnvHome: dataDir}, nil, inDataDir, 11},
		{"DURABLE_AGENT_DATADIR holds the default file", "", map[string]string{"DURABLE_AGENT_DATADIR": dataDir}, nil, inDataDir, 11},
		{"--data-dir holds the default file", "", nil, []string{"--data-dir", dataDir}, inDataDir, 11},
		{"DURABLE_AGENT_CONFIG names the file", "", map[string]string{EnvConfig: named, EnvHome: dataDir}, nil, named, 12},
		{"--config over DURABLE_AGENT_CONFIG", "", map[string]string{EnvConfig: inDataDir}, []string{"--config", named}, named, 12},
		{"LoadOptions.File first", named, map[string]string{EnvConfig: inDataDir}, []string{"--config", inDataDir}, named, 12},
		{"missing default file is fine", "", map[string]string{EnvHome: filepath.Join(dataDir, "new")}, nil, filepath.Join(dataDir, "new", FileName), 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := load(t, c.opt, newEnv(t, c.env), c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if s.File() != c.wantFile || s.Retry.MaxRetries != c.wantRetries {
				t.Errorf("File() = %q, maxRetries = %d; want %q, %d", s.File(), s.Retry.MaxRetries, c.wantFile, c.wantRetries)
			}
		})
	}
}

// Every source can set a list; env and flags separate items with ";".
func TestLoad_ScriptedFaultsFromEachSource(t *testing.T) {
	cases := []struct {
		name string
		file string
		env  map[string]string
		args []string
		want []string
	}{
		{"YAML list", "scripted:\n  faults: [\"503 Service Unavailable\", ok]\n", nil, nil, []string{"503 Service Unavailable", "ok"}},
		{"YAML block list", "scripted:\n  faults:\n    - \"[529 overloaded_error] Overloaded\"\n    - overflow\n", nil, nil, []string{"[529 overloaded_error] Overloaded", "overflow"}},
		{"env semicolons", "", map[string]string{"DURABLE_AGENT_SCRIPTED_FAULTS": "503 Service Unavailable; 502 Bad Gateway;ok"}, nil, []string{"503 Service Unavailable", "502 Bad Gateway", "ok"}},
		{"flag semicolons over file", "scripted:\n  faults: [overflow]\n", nil, []string{"--scripted.faults=rate limit, slow down;ok"}, []string{"rate limit, slow down", "ok"}},
		{"YAML null is empty", "scripted:\n  faults:\n", nil, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := ""
			if c.file != "" {
				path = writeYAML(t, c.file)
			}
			s, err := load(t, path, newEnv(t, c.env), c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.Scripted.Faults, c.want) {
				t.Errorf("scripted.faults = %q, want %q", s.Scripted.Faults, c.want)
			}
		})
	}
}

// SPEC 3 step 7 (fallback models): retry.fallbackModels comes from every
// source; env and flags separate models with ";"; ten models are allowed.
func TestLoad_FallbackModelsFromEachSource(t *testing.T) {
	ten := []string{"m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10"}
	cases := []struct {
		name string
		file string
		env  map[string]string
		args []string
		want []string
	}{
		{"default is none", "", nil, nil, nil},
		{"YAML list", "retry:\n  fallbackModels: [claude-b, claude-c]\n", nil, nil, []string{"claude-b", "claude-c"}},
		{"YAML block list", "retry:\n  fallbackModels:\n    - claude-b\n", nil, nil, []string{"claude-b"}},
		{"YAML empty list", "retry:\n  fallbackModels: []\n", nil, nil, nil},
		{"env semicolons", "", map[string]string{"DURABLE_AGENT_RETRY_FALLBACKMODELS": "gpt-b; gpt-c"}, nil, []string{"gpt-b", "gpt-c"}},
		{"flag over env", "", map[string]string{"DURABLE_AGENT_RETRY_FALLBACKMODELS": "gpt-b"}, []string{"--retry.fallbackModels=gpt-c;gpt-d"}, []string{"gpt-c", "gpt-d"}},
		{"ten models", "", nil, []string{"--retry.fallbackModels=" + strings.Join(ten, ";")}, ten},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := ""
			if c.file != "" {
				path = writeYAML(t, c.file)
			}
			s, err := load(t, path, newEnv(t, c.env), c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.Retry.FallbackModels, c.want) {
				t.Errorf("retry.fallbackModels = %q, want %q", s.Retry.FallbackModels, c.want)
			}
		})
	}
}

// The file may use nested groups or flat dotted keys; both name the same key.
func TestLoad_FlatAndNestedKeys(t *testing.T) {
	cases := []struct{ name, yaml string }{
		{"nested", "model:\n  provider: anthropic\n  name: claude\n  baseUrl: https://example.test/v1\n"},
		{"flat dotted", "model.provider: anthropic\nmodel.name: claude\nmodel.baseUrl: https://example.test/v1\n"},
		{"mixed", "model.provider: anthropic\nmodel:\n  name: claude\n  baseUrl: https://example.test/v1\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := load(t, writeYAML(t, c.yaml), newEnv(t, nil))
			if err != nil {
				t.Fatal(err)
			}
			if s.Model.Provider != "anthropic" || s.Model.Name != "claude" || s.Model.BaseURL != "https://example.test/v1" {
				t.Errorf("model = %+v", s.Model)
			}
		})
	}
}

// Strings keep the text as written: a YAML number is not reformatted.
func TestLoad_StringKeepsYAMLText(t *testing.T) {
	s, err := load(t, writeYAML(t, "model:\n  name: 1.50\nscripted:\n  reply: ~\n"), newEnv(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if s.Model.Name != "1.50" || s.Scripted.Reply != "" {
		t.Errorf("model.name = %q, scripted.reply = %q; want \"1.50\", \"\"", s.Model.Name, s.Scripted.Reply)
	}
}

func TestAddFlags_EveryKeyHasAFlag(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	AddFlags(fs)
	for _, k := range Keys() {
		f := fs.Lookup(k.Flag[2:])
		if f == nil {
			t.Errorf("no flag %s for %s", k.Flag, k.Key)
			continue
		}
		if f.Usage == "" {
			t.Errorf("flag %s has no usage text", k.Flag)
		}
	}
	for _, name := range []string{"config", "data-dir", "retry.maxRetries", "model.heartbeatTimeoutMs"} {
		if fs.Lookup(name) == nil {
			t.Errorf("flag --%s missing", name)
		}
	}
}

func TestKeys_DescribeEveryField(t *testing.T) {
	keys := Keys()
	if len(keys) != len(schema) {
		t.Fatalf("Keys() has %d entries, schema %d", len(keys), len(schema))
	}
	want := map[string]string{
		"retry.maxRetries": "DURABLE_AGENT_RETRY_MAXRETRIES",
		"model.provider":   "DURABLE_AGENT_MODEL_PROVIDER",
		"dataDir":          "DURABLE_AGENT_DATADIR",
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k.Key] {
			t.Errorf("duplicate key %s", k.Key)
		}
		seen[k.Key] = true
		if k.Description == "" || k.Default == "" && k.Type != "string" && k.Type != "list" {
			t.Errorf("%s: missing description or default: %+v", k.Key, k)
		}
		if env, ok := want[k.Key]; ok && k.Env != env {
			t.Errorf("%s env = %s, want %s", k.Key, k.Env, env)
		}
	}
	// Every key must reach a field: setting each one to a
	// non-default value must change Settings.
	for i := range schema {
		k := &schema[i]
		d := Defaults()
		before := Defaults()
		switch p := k.field(&d).(type) {
		case *bool:
			*p = !*p
		case *int:
			*p++
		case *int64:
			*p++
		case *string:
			*p += "x"
		case *[]string:
			*p = append(*p, "x")
		}
		if reflect.DeepEqual(d, before) {
			t.Errorf("%s does not point at a field", k.key)
		}
	}
}

// `starter demo` reads DURABLE_AGENT_WORKER_BIN itself; settings must not
// refuse it as a typo of a key, or the demo cannot start with it set.
func TestLoad_WorkerBinEnvIsNotATypo(t *testing.T) {
	newEnv(t, map[string]string{EnvWorkerBin: "/opt/bin/worker"})
	if _, err := Load(LoadOptions{}); err != nil {
		t.Errorf("Load with %s set = %v, want nil", EnvWorkerBin, err)
	}
}
