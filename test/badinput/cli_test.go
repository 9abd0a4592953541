package badinput

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/testserver"
)

// closedAddress is a loopback host:port that nothing listens on, so a
// case that wrongly got as far as dialing Temporal fails fast and visibly
// instead of reaching a server someone runs on the default port.
func closedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// starter runs the starter CLI in-process with an injected environment
// (nothing of the real one) and returns its exit code and stderr.
func starter(t *testing.T, env map[string]string, args ...string) (int, string) {
	t.Helper()
	testserver.SetEnv(t, env)
	var stdout, stderr bytes.Buffer
	code := cli.Main(args, cli.Env{
		Stdout: &stdout, Stderr: &stderr, Stdin: strings.NewReader(""),
	})
	return code, stderr.String()
}

// checkOneLineError checks the bad-input contract of a CLI: exit code 2
// and exactly one line on stderr that contains every wanted fragment.
func checkOneLineError(t *testing.T, code int, stderr string, want ...string) {
	t.Helper()
	t.Logf("exit %d: %s", code, strings.TrimSuffix(stderr, "\n"))
	if code != cli.ExitUsage {
		t.Errorf("exit code %d, want %d (stderr %q)", code, cli.ExitUsage, stderr)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("stderr is not exactly one line: %q", stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not name the problem: missing %q", stderr, w)
		}
	}
}

// SPEC 8 / issue 7: bad command-line arguments, flags and environment
// values stop the starter with exit code 2 and one line naming the
// problem, before anything is started.
func TestStarter_BadArgumentsExit2WithOneLine(t *testing.T) {
	long := strings.Repeat("s", 129)
	cases := []struct {
		name string
		env  map[string]string // added to the base environment
		args []string
		want []string
	}{
		{name: "unknown command", args: []string{"frobnicate"}, want: []string{`unknown command "frobnicate"`}},
		{name: "prompt without a message", args: []string{"prompt"}, want: []string{"missing MESSAGE"}},
		{name: "prompt with a blank message", args: []string{"prompt", "  "}, want: []string{"missing MESSAGE"}},
		{name: "fault with a bad hang duration", args: []string{"prompt", "--fault", "hang:soon", "hi"}, want: []string{`"hang:soon"`, "bad hang duration"}},
		{name: "fault with a negative hang", args: []string{"prompt", "--fault", "hang:-1s", "hi"}, want: []string{"bad hang duration"}},
		{name: "fault with unclosed structured fields", args: []string{"prompt", "--fault", "[503 overloaded", "hi"}, want: []string{"missing ']'"}},
		{name: "fault with structured fields but no text", args: []string{"prompt", "--fault", "[503]", "hi"}, want: []string{"empty error text"}},
		{name: "session id escaping the directory", args: []string{"prompt", "--session", "../etc/passwd", "hi"}, want: []string{"--session", "invalid session id", `'/'`}},
		{name: "empty session id", args: []string{"state", "--session", ""}, want: []string{"invalid session id: empty"}},
		{name: "session id too long", args: []string{"abort", "--session", long}, want: []string{"129 characters, at most 128"}},
		{name: "session id with a space", args: []string{"events", "--session", "a b"}, want: []string{"invalid session id", "' '"}},
		{name: "session id dot-dot", args: []string{"abort-retry", "--session", ".."}, want: []string{`".."`, "not a file name"}},
		{name: "unknown flag", args: []string{"prompt", "--frobnicate", "hi"}, want: []string{"unknown flag: --frobnicate"}},
		{name: "flag without its value", args: []string{"prompt", "hi", "--session"}, want: []string{"flag needs an argument", "session"}},
		{name: "negative maxRetries flag", args: []string{"prompt", "--retry.maxRetries=-1", "hi"}, want: []string{"retry.maxRetries", `"-1"`, "flag --retry.maxRetries"}},
		{name: "non-numeric maxRetries flag", args: []string{"prompt", "--retry.maxRetries=three", "hi"}, want: []string{"retry.maxRetries", `"three"`}},
		{name: "huge maxRetries flag", args: []string{"prompt", "--retry.maxRetries=1000000", "hi"}, want: []string{"retry.maxRetries", "at most 100"}},
		{name: "maxRetries beyond int64", args: []string{"prompt", "--retry.maxRetries=99999999999999999999999", "hi"}, want: []string{"retry.maxRetries", "99999999999999999999999"}},
		{name: "negative baseDelayMs flag", args: []string{"prompt", "--retry.baseDelayMs=-2000", "hi"}, want: []string{"retry.baseDelayMs", `"-2000"`}},
		{name: "huge baseDelayMs flag", args: []string{"prompt", "--retry.baseDelayMs=86400000", "hi"}, want: []string{"retry.baseDelayMs", "1 hour"}},
		{name: "fractional baseDelayMs flag", args: []string{"prompt", "--retry.baseDelayMs=1.5", "hi"}, want: []string{"retry.baseDelayMs", `"1.5"`}},
		{name: "non-boolean retry.enabled flag", args: []string{"prompt", "--retry.enabled=maybe", "hi"}, want: []string{"retry.enabled", `"maybe"`}},
		{name: "bad json flag value", args: []string{"state", "--json=perhaps"}, want: []string{"invalid argument", "perhaps"}},
		{name: "heartbeat timeout above model timeout", args: []string{"prompt", "--model.timeoutMs=5000", "--model.heartbeatTimeoutMs=6000", "hi"}, want: []string{"model.heartbeatTimeoutMs", "at most model.timeoutMs (5000)"}},
		{name: "unknown provider", args: []string{"prompt", "--model.provider=gemini", "hi"}, want: []string{"model.provider", `"gemini"`}},
		{name: "temporal address without a port", args: []string{"state", "--temporal.address=myhost"}, want: []string{"temporal.address", `"myhost"`}},
		{name: "missing settings file", args: []string{"state", "--config", "/nonexistent/settings.yaml"}, want: []string{"/nonexistent/settings.yaml", "does not exist"}},
		{name: "set-auto-retry without on/off", args: []string{"set-auto-retry"}, want: []string{"want exactly one argument: on or off"}},
		{name: "set-auto-retry with two values", args: []string{"set-auto-retry", "on", "off"}, want: []string{"want exactly one argument"}},
		{name: "set-auto-retry with maybe", args: []string{"set-auto-retry", "maybe"}, want: []string{`argument "maybe" is not on or off`}},
		{name: "abort-retry with an argument", args: []string{"abort-retry", "now"}, want: []string{`unexpected argument "now"`}},
		{name: "compact with an argument", args: []string{"compact", "everything"}, want: []string{`unexpected argument "everything"`}},
		{name: "compact with a bad summary fault", args: []string{"compact", "--fault", "hang:x"}, want: []string{"bad hang duration"}},
		{name: "events after a non-number", args: []string{"events", "--after", "ten"}, want: []string{"invalid argument", `"ten"`, "--after"}},
		{name: "worker-only scripted reply flag", args: []string{"prompt", "--scripted.reply", "hi there", "hi"}, want: []string{"--scripted.reply is a worker setting", "go run ./worker --scripted.reply"}},
		{name: "worker-only scripted latency flag", args: []string{"prompt", "--scripted.latencyMs=500", "hi"}, want: []string{"--scripted.latencyMs is a worker setting"}},
		{name: "worker-only dev port flag", args: []string{"state", "--dev.port", "7234"}, want: []string{"--dev.port is a worker setting", "--temporal.address"}},
		{name: "worker-only tools policy flag", args: []string{"prompt", "--tools.allowedRoots", "/srv", "hi"}, want: []string{"--tools.allowedRoots is a worker setting"}},
		{name: "worker-only base URL flag", args: []string{"prompt", "--model.baseUrl", "http://localhost:8080", "hi"}, want: []string{"--model.baseUrl is a worker setting"}},
		{name: "unused credential flag", args: []string{"prompt", "--model.credential", "c1", "hi"}, want: []string{"--model.credential is not used by the starter or the worker"}},
		{name: "negative maxRetries in the environment", env: map[string]string{"DURABLE_AGENT_RETRY_MAXRETRIES": "-5"}, args: []string{"state"}, want: []string{"retry.maxRetries", `"-5"`, "environment DURABLE_AGENT_RETRY_MAXRETRIES"}},
		{name: "non-numeric baseDelayMs in the environment", env: map[string]string{"DURABLE_AGENT_RETRY_BASEDELAYMS": "fast"}, args: []string{"state"}, want: []string{"retry.baseDelayMs", `"fast"`, "DURABLE_AGENT_RETRY_BASEDELAYMS"}},
		{name: "bad fault script in the environment", env: map[string]string{"DURABLE_AGENT_SCRIPTED_FAULTS": "503;hang:later"}, args: []string{"state"}, want: []string{"scripted.faults", "hang:later"}},
		{name: "unreachable Temporal", args: []string{"state", "--session", "s1"}, want: []string{"cannot reach Temporal at 127.0.0.1:"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"DURABLE_AGENT_HOME": t.TempDir(), "TEMPORAL_ADDRESS": closedAddress(t)}
			for k, v := range tc.env {
				env[k] = v
			}
			code, stderr := starter(t, env, tc.args...)
			checkOneLineError(t, code, stderr, tc.want...)
		})
	}
}

// Without arguments the starter prints its usage and exits 2.
func TestStarter_NoArgumentsPrintsUsageAndExits2(t *testing.T) {
	code, stderr := starter(t, map[string]string{"DURABLE_AGENT_HOME": t.TempDir()})
	if code != cli.ExitUsage || !strings.HasPrefix(stderr, "usage: starter <command>") {
		t.Fatalf("exit %d, stderr %q; want 2 and the usage", code, stderr)
	}
}

// SPEC 8: a bad settings file (negative, non-numeric or huge values,
// unknown keys, bad YAML) stops the starter at start with one line naming
// the key, the value and the file and line.
func TestStarter_BadSettingsFileExit2WithOneLine(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		{"negative maxRetries", "retry:\n  maxRetries: -1\n", []string{"retry.maxRetries", `"-1"`, "settings.yaml:2"}},
		{"non-numeric maxRetries", "retry:\n  maxRetries: lots\n", []string{"retry.maxRetries", `"lots"`}},
		{"huge maxRetries", "retry:\n  maxRetries: 4294967296\n", []string{"retry.maxRetries", "at most 100"}},
		{"negative baseDelayMs", "retry:\n  baseDelayMs: -1\n", []string{"retry.baseDelayMs", `"-1"`}},
		{"non-numeric baseDelayMs", "retry:\n  baseDelayMs: 2s\n", []string{"retry.baseDelayMs", `"2s"`}},
		{"huge baseDelayMs", "retry:\n  baseDelayMs: 1e12\n", []string{"retry.baseDelayMs", `"1e12"`}},
		{"unknown key", "retry:\n  maxRetires: 3\n", []string{`unknown key "retry.maxRetires"`, "did you mean retry.maxRetries?"}},
		{"unknown top-level key", "proxy: http://x\n", []string{`unknown key "proxy"`, "settings.yaml:1"}},
		{"bad YAML", "retry:\n  maxRetries: [3\n", []string{"bad YAML", "settings.yaml"}},
		{"tab indentation", "retry:\n\tmaxRetries: 3\n", []string{"bad YAML", "settings.yaml"}},
		{"a list instead of a mapping", "- retry\n- model\n", []string{"top level must be a mapping"}},
		{"bad fault in the script", "scripted:\n  faults: [\"503\", \"hang:?\"]\n", []string{"scripted.faults", "hang:?"}},
		{"binary garbage", "\x00\x01\x02\xff\xfe", []string{"settings.yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, "settings.yaml"), []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"DURABLE_AGENT_HOME": home, "TEMPORAL_ADDRESS": closedAddress(t)}
			code, stderr := starter(t, env, "prompt", "--session", "s1", "hi")
			checkOneLineError(t, code, stderr, tc.want...)
		})
	}
}

// Files the starter is asked to use that cannot be: a data dir that is a
// file, and `settings init` over an existing settings file (never
// overwritten).
func TestStarter_UnusableFilesExit2WithOneLine(t *testing.T) {
	t.Run("data dir is a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, stderr := starter(t, map[string]string{"DURABLE_AGENT_HOME": file}, "state")
		checkOneLineError(t, code, stderr, "dataDir", file, "must be a directory")
	})
	t.Run("settings init over an existing file", func(t *testing.T) {
		home := t.TempDir()
		path := filepath.Join(home, "settings.yaml")
		const mine = "retry:\n  maxRetries: 5\n"
		if err := os.WriteFile(path, []byte(mine), 0o600); err != nil {
			t.Fatal(err)
		}
		code, stderr := starter(t, map[string]string{"DURABLE_AGENT_HOME": home}, "settings", "init")
		checkOneLineError(t, code, stderr, path, "already exists; not overwriting it")
		if b, _ := os.ReadFile(path); string(b) != mine {
			t.Fatalf("settings file changed to %q", b)
		}
	})
}

// Issue 15 item 8: a message that starts with "-" is one line saying to
// put it after "--" (pflag printed every flag for "-hello", and echoed
// raw bytes), and after "--" it is accepted.
func TestStarter_MessageStartingWithDashSaysUseDoubleDash(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"prompt", "-hello"}, []string{`unknown flag "-hello"`, `a message that starts with "-" goes after --: starter prompt [flags] -- "-hello"`}},
		{[]string{"prompt", "--session", "s1", "-x marks the spot"}, []string{`unknown flag "-x marks the spot"`, `starter prompt [flags] -- "-x marks the spot"`}},
		{[]string{"prompt", "-\xff\xfe"}, []string{`unknown flag "-\xff\xfe"`}},
		{[]string{"steer", "-h1 first"}, []string{`unknown flag "-h1 first"`, `starter steer [flags] -- "-h1 first"`}},
		{[]string{"follow-up", "-v"}, []string{`unknown flag "-v"`, `starter follow-up [flags] -- "-v"`}},
		{[]string{"state", "-hello"}, []string{`starter state: unknown flag "-hello"`}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			env := map[string]string{"DURABLE_AGENT_HOME": t.TempDir(), "TEMPORAL_ADDRESS": closedAddress(t)}
			code, stderr := starter(t, env, tc.args...)
			checkOneLineError(t, code, stderr, tc.want...)
			if !utf8.ValidString(stderr) {
				t.Errorf("stderr echoes raw bytes: %q", stderr)
			}
		})
	}
	// After "--" the message is taken: the prompt gets as far as dialling.
	for _, args := range [][]string{{"prompt", "--", "-hello"}, {"steer", "--session", "s1", "--", "-v"}} {
		env := map[string]string{"DURABLE_AGENT_HOME": t.TempDir(), "TEMPORAL_ADDRESS": closedAddress(t)}
		code, stderr := starter(t, env, args...)
		checkOneLineError(t, code, stderr, "cannot reach Temporal")
	}
	// -h and --help still print the flags.
	code, stderr := starter(t, map[string]string{"DURABLE_AGENT_HOME": t.TempDir()}, "prompt", "--help")
	if code != cli.ExitUsage || !strings.HasPrefix(stderr, "usage of starter prompt:\n") || !strings.Contains(stderr, "--workspace") {
		t.Fatalf("prompt --help: exit %d, stderr %q", code, stderr)
	}
}

// Issue 15 item 8: `starter chat` without a terminal on stdin (/dev/null,
// a pipe that ends, a closed stdin) says at once, in one line, that chat
// needs a terminal — before dialling Temporal — instead of failing in
// epoll or never ending at EOF.
func TestStarter_ChatWithoutATerminalExits2WithOneLine(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := w.WriteString("hello\n/quit\n"); err != nil {
		t.Fatal(err)
	}
	w.Close() // EOF after the lines
	closed, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	for name, stdin := range map[string]*os.File{"/dev/null": null, "a pipe at EOF": r, "closed stdin": closed} {
		t.Run(name, func(t *testing.T) {
			vars := map[string]string{"DURABLE_AGENT_HOME": t.TempDir(), "TEMPORAL_ADDRESS": closedAddress(t)}
			testserver.SetEnv(t, vars)
			var stdout, stderr bytes.Buffer
			done := make(chan int, 1)
			go func() {
				done <- cli.Main([]string{"chat", "--session", "s1"}, cli.Env{Stdout: &stdout, Stderr: &stderr, Stdin: stdin})
			}()
			select {
			case code := <-done:
				checkOneLineError(t, code, stderr.String(), "starter chat: needs a terminal: stdin is not one")
				if strings.Contains(stderr.String(), "Temporal") {
					t.Errorf("chat dialled Temporal before the terminal check: %q", stderr.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("chat with %s did not exit within 10 s", name)
			}
		})
	}
}
