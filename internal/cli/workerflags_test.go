package cli

import (
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/settings"
)

// A settings flag the starter would ignore (a worker-only key, or one no
// program reads) is refused with one line naming the flag and saying it
// is a worker setting, before anything is dialled; it stays out of the
// commands' usage.
func TestCLI_WorkerOnlyFlagsRefused(t *testing.T) {
	value := map[string]string{"bool": "true", "int": "1", "list": "x", "string": "x"}
	n := 0
	for _, k := range settings.Keys() {
		if k.Scope == settings.ScopeShared || k.Scope == settings.ScopePrompt {
			continue
		}
		n++
		arg := k.Flag + "=" + value[k.Type]
		switch k.Key {
		case "dev.ip":
			arg = k.Flag + "=127.0.0.2"
		case "tools.placement":
			arg = k.Flag + "=any"
		}
		for _, args := range [][]string{
			{"prompt", arg, "hello"},
			{"state", arg},
			{"events", "--follow", arg},
			{"auth", "list", arg},
			{"auth", "remove", "x", arg},
		} {
			if args[0] == "auth" && !starterIgnores(args[0]+" "+args[1], k) {
				continue // auth list reads session.* (the rate-limit windows' store)
			}
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, out, stderr := run(t, nil, args...)
				want := k.Flag + " is a worker setting"
				if k.Scope == settings.ScopeUnused {
					want = k.Flag + " is not used by the starter or the worker"
				}
				if code != ExitUsage || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 || out != "" {
					t.Fatalf("exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", code, stderr, out, want)
				}
				if strings.Contains(stderr, "cannot reach Temporal") {
					t.Fatalf("dialled Temporal before refusing the flag: %q", stderr)
				}
			})
		}
	}
	for _, key := range []string{"scripted.reply", "scripted.latencyMs", "scripted.streamDelayMs", "dev.port", "dev.ui", "tools.allowedRoots", "session.store"} {
		found := false
		for _, k := range settings.Keys() {
			found = found || k.Key == key && k.Scope == settings.ScopeWorker
		}
		if !found {
			t.Errorf("%s is not a worker-only key", key)
		}
	}
	if n == 0 {
		t.Fatal("no worker-only keys")
	}

	// The usage of a command lists its own flags, not the worker's.
	_, _, usage := run(t, nil, "state", "-h")
	if !strings.Contains(usage, "--retry.enabled") || strings.Contains(usage, "--dev.port") || strings.Contains(usage, "--scripted.reply") {
		t.Fatalf("state -h lists the wrong flags:\n%s", usage)
	}
}

// Keys the starter reads are accepted, and so are worker keys where a
// command reads them: session opens the stores itself, settings shows
// every key.
func TestCLI_SharedAndUsedWorkerFlagsAccepted(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		code    int
		wantOut string
		wantErr string
	}{
		{[]string{"state", "--session", "s1", "--retry.enabled=false", "--scripted.faults", "ok", "--stream.intervalMs", "100"}, ExitUsage, "", "cannot reach Temporal"},
		{[]string{"prompt", "--compaction.keepRecentTokens", "100", "--tools.requireApproval", "bash", "hi"}, ExitUsage, "", "cannot reach Temporal"},
		{[]string{"session", "list", "--store", "jsonl", "--session.store", "jsonl"}, ExitOK, "", ""},
		{[]string{"settings", "--dev.port", "9999", "--scripted.reply", "hi"}, ExitOK, "flag --dev.port", ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, stderr := run(t, nil, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.wantOut) || !strings.Contains(stderr, tc.wantErr) || strings.Contains(stderr, "worker setting") {
				t.Fatalf("exit %d (want %d)\nstdout %q\nstderr %q", code, tc.code, out, stderr)
			}
		})
	}
}
