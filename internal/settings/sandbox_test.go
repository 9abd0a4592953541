package settings

import (
	"strings"
	"testing"
)

// Issue 22: tools.sandbox.allowHosts is read from a nested settings
// file, the environment and a flag; a bad entry is refused at start in
// one line naming the key, the entry's index and what is wrong.
func TestSandboxAllowHosts(t *testing.T) {
	if d := Defaults(); len(d.Tools.Sandbox.AllowHosts) != 0 {
		t.Fatalf("default allowHosts %v, want none", d.Tools.Sandbox.AllowHosts)
	}
	file := writeYAML(t, "tools:\n  sandbox:\n    allowHosts: [registry.npmjs.org, \"*.pypi.org\", \"10.0.0.5:3128\"]\n")
	s, err := load(t, file, newEnv(t, nil))
	if err != nil || strings.Join(s.Tools.Sandbox.AllowHosts, ",") != "registry.npmjs.org,*.pypi.org,10.0.0.5:3128" {
		t.Fatalf("from file: %v, %v", s.Tools.Sandbox.AllowHosts, err)
	}
	s, err = load(t, "", newEnv(t, map[string]string{"DURABLE_AGENT_TOOLS_SANDBOX_ALLOWHOSTS": "a.test;b.test"}),
		"--tools.sandbox.allowHosts=proxy.golang.org")
	if err != nil || strings.Join(s.Tools.Sandbox.AllowHosts, ",") != "proxy.golang.org" {
		t.Fatalf("flag over environment: %v, %v", s.Tools.Sandbox.AllowHosts, err)
	}

	for name, tc := range map[string]struct{ file, env, want string }{
		"url":         {env: "example.com;https://x.org", want: `tools.sandbox.allowHosts[1]: host pattern "https://x.org": give a host name, not a URL`},
		"star tld":    {env: "*.com", want: `tools.sandbox.allowHosts[0]: host pattern "*.com": a wildcard needs a domain of at least two labels`},
		"star inside": {env: "a.*.b.com", want: "'*' is allowed only as the first label"},
		"bad port":    {env: "example.com:99999", want: "the port must be a number from 1 to 65535"},
		"repeat":      {env: "example.com;Example.COM.", want: "tools.sandbox.allowHosts[1]: repeats tools.sandbox.allowHosts[0]"},
		"empty item":  {env: "a.com;;b.com", want: "tools.sandbox.allowHosts[1]: empty host pattern"},
		"not a list":  {file: "tools:\n  sandbox:\n    allowHosts: example.com\n", want: "tools.sandbox.allowHosts: must be a list"},
		"in file":     {file: "tools:\n  sandbox:\n    allowHosts: [\"exa mple.com\"]\n", want: `tools.sandbox.allowHosts[0]: host pattern "exa mple.com"`},
	} {
		env := map[string]string{}
		if tc.env != "" {
			env["DURABLE_AGENT_TOOLS_SANDBOX_ALLOWHOSTS"] = tc.env
		}
		file := ""
		if tc.file != "" {
			file = writeYAML(t, tc.file)
		}
		_, err := load(t, file, newEnv(t, env))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", name, err, tc.want)
		}
	}
}

// Issue 22: tools.sandbox.network allowlist is a value the worker
// accepts, from the settings file with its allowHosts beside it; its
// description no longer calls it unavailable.
func TestSandboxNetworkAllowlistIsAccepted(t *testing.T) {
	file := writeYAML(t, "tools:\n  sandbox:\n    network: allowlist\n    allowHosts: [proxy.golang.org]\n")
	s, err := load(t, file, newEnv(t, nil))
	if err != nil || s.Tools.Sandbox.Network != SandboxNetworkAllowlist || strings.Join(s.Tools.Sandbox.AllowHosts, ",") != "proxy.golang.org" {
		t.Fatalf("network allowlist: %+v, %v", s.Tools.Sandbox, err)
	}
	for _, k := range Keys() {
		if k.Key == "tools.sandbox.network" && (strings.Contains(k.Description, "not available") || !strings.Contains(k.Description, "allowlist")) {
			t.Errorf("tools.sandbox.network description: %s", k.Description)
		}
	}
}
