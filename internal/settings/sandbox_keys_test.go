package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Issue 22: the sandbox keys default to auto, network off and no rlimits,
// load from the environment and the settings file, and reject bad values
// in one line that names the key.
func TestSandboxKeys(t *testing.T) {
	if d := Defaults().Tools.Sandbox; !reflect.DeepEqual(d, Sandbox{Mode: SandboxAuto, Network: SandboxNetworkOff}) {
		t.Fatalf("defaults: %+v", d)
	}
	load := func(env map[string]string, file string) (Settings, error) {
		home := t.TempDir()
		env["DURABLE_AGENT_HOME"] = home
		if file != "" {
			if err := os.WriteFile(filepath.Join(home, "settings.yaml"), []byte(file), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return loadEnv(t, env)
	}
	s, err := load(map[string]string{
		"DURABLE_AGENT_TOOLS_SANDBOX_NETWORK":      "host",
		"DURABLE_AGENT_TOOLS_SANDBOX_MEMORYMB":     "2048",
		"DURABLE_AGENT_TOOLS_SANDBOX_MAXPROCESSES": "256",
		"DURABLE_AGENT_TOOLS_SANDBOX_CPUSECONDS":   "600",
	}, "tools:\n  sandbox:\n    mode: off\n")
	want := Sandbox{Mode: SandboxOff, Network: SandboxNetworkHost, MemoryMB: 2048, MaxProcesses: 256, CPUSeconds: 600}
	if err != nil || !reflect.DeepEqual(s.Tools.Sandbox, want) {
		t.Fatalf("load: %+v, %v; want %+v", s.Tools.Sandbox, err, want)
	}
	for name, tc := range map[string]struct{ key, value, want string }{
		"unknown mode":     {"DURABLE_AGENT_TOOLS_SANDBOX_MODE", "docker", "tools.sandbox.mode: must be one of auto, bubblewrap, off"},
		"unknown network":  {"DURABLE_AGENT_TOOLS_SANDBOX_NETWORK", "lan", "tools.sandbox.network: must be one of off, host, allowlist"},
		"negative memory":  {"DURABLE_AGENT_TOOLS_SANDBOX_MEMORYMB", "-1", "tools.sandbox.memoryMB"},
		"memory not a num": {"DURABLE_AGENT_TOOLS_SANDBOX_MEMORYMB", "4G", "tools.sandbox.memoryMB"},
		"negative procs":   {"DURABLE_AGENT_TOOLS_SANDBOX_MAXPROCESSES", "-5", "tools.sandbox.maxProcesses"},
		"cpu past a week":  {"DURABLE_AGENT_TOOLS_SANDBOX_CPUSECONDS", "604801", "tools.sandbox.cpuSeconds"},
	} {
		_, err := load(map[string]string{tc.key: tc.value}, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", name, err, tc.want)
		}
	}
	if !WorkerReads(keyInfo(t, "tools.sandbox.mode")) {
		t.Errorf("the worker does not read tools.sandbox.mode")
	}
}

func keyInfo(t *testing.T, key string) KeyInfo {
	t.Helper()
	for _, k := range Keys() {
		if k.Key == key {
			return k
		}
	}
	t.Fatalf("no key %s", key)
	return KeyInfo{}
}
