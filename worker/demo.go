// The demo (`worker demo`, which `starter demo` execs) is the whole
// product in one command. It
// starts (or reuses) the embedded Temporal server with its Web UI, starts
// a worker in this process, and runs a small real job in a temporary
// workspace: the scripted model reads a file, edits it, hits a 503 (a
// retry on a durable timer), runs a test with bash and sums up. It prints
// the tool calls and retry events live, what changed, and the link to the
// workflow in the UI. It lives in the worker's main, its only user.

package main

import (
	"context"
	"fmt"
	"hash/crc32"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/stack"
	"github.com/durableagent/durableagent/workflows"
	"github.com/spf13/pflag"
)

// DefaultScript is what the demo's scripted model does, one element per
// model call: read the file, fix it, fail once with a retryable 503 (the
// retry waits on a durable timer), run the test, answer.
var DefaultScript = []string{
	`tool:read {"path":"greet.sh"}`,
	`tool:edit {"path":"greet.sh","oldText":"Helo","newText":"Hello"}`,
	"503 Service Unavailable",
	`tool:bash {"command":"sh test.sh"}`,
	`text:Fixed the typo in greet.sh ("Helo" -> "Hello"); sh test.sh passes now.`,
}

// DemoMessage is the prompt the demo sends.
const DemoMessage = "test.sh fails: fix greet.sh so that it passes."

// demoFiles is the demo's workspace: a greeting with a typo and its test.
var demoFiles = map[string]string{
	"greet.sh": "#!/bin/sh\n# greet NAME prints a greeting.\necho \"Helo, $1!\"\n",
	"test.sh":  "#!/bin/sh\n# The test of greet.sh.\nout=$(sh greet.sh world)\nif [ \"$out\" = \"Hello, world!\" ]; then echo PASS; else echo \"FAIL: got '$out'\"; exit 1; fi\n",
}

// demoCommand is the demo command that `worker demo` runs (cli.Main's
// extra; main runs it by name, so no usage lists its summary).
var demoCommand = cli.Command{Name: "demo", Run: runDemo}

func runDemo(ctx context.Context, env cli.Env, args []string) int {
	fs := pflag.NewFlagSet("demo", pflag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	sessionID := fs.String("session", fmt.Sprintf("demo-%d", time.Now().Unix()), "session id")
	faults := fs.StringArray("fault", DefaultScript, "the scripted model's script, one element per model call (repeatable; see docs/tools.md)")
	workspace := fs.String("workspace", "", "the job's workspace (default: a new temporary directory with the demo's files)")
	keep := fs.Bool("keep", term.IsTerminal(int(os.Stdin.Fd())), "keep the server and UI running after the prompt until Ctrl-C (default: when run from a terminal)")
	settings.AddFlags(fs)
	fail := func(err error) int {
		fmt.Fprintf(env.Stderr, "starter demo: %v\n", err)
		return cli.ExitUsage
	}
	if err := fs.Parse(args); err != nil {
		return fail(err)
	}
	if err := session.ValidateID(*sessionID); err != nil {
		return fail(fmt.Errorf("--session: %w", err))
	}
	if err := scripted.ValidateScript(*faults); err != nil {
		return fail(err)
	}
	s, note, err := demoSettings(fs, env)
	if err != nil {
		return fail(err)
	}
	if note != "" {
		fmt.Fprintln(env.Stderr, "starter demo: "+note)
	}
	if s.Model.Provider != "scripted" {
		fmt.Fprintf(env.Stderr, "starter demo: note: model.provider is %q; the injected faults only apply to the scripted model\n", s.Model.Provider)
	}

	if note := ownQueueIfServed(ctx, &s); note != "" {
		fmt.Fprintln(env.Stderr, "starter demo: "+note)
	}
	fmt.Fprintln(env.Stdout, "starting the embedded Temporal server, its Web UI and a worker…")
	st, err := stack.Start(ctx, s, stack.Options{Dev: true, ReuseServer: true, Out: env.Stdout})
	if err != nil {
		return fail(err)
	}
	defer st.Close()

	ws, err := demoWorkspace(*workspace)
	if err != nil {
		return fail(err)
	}
	before := snapshot(ws)
	if *workspace == "" {
		// A temporary workspace per run would pile up in /tmp: it goes
		// when the demo exits (--workspace DIR keeps the job's files).
		defer os.RemoveAll(ws)
		fmt.Fprintf(env.Stdout, "workspace: %s (removed when the demo exits; --workspace DIR keeps it)\n", ws)
	} else {
		fmt.Fprintf(env.Stdout, "workspace: %s\n", ws)
	}

	k, err := client.NewController(st.Client, st.Settings)
	if err != nil {
		return fail(err)
	}
	in := client.PromptInput(st.Settings, *sessionID, DemoMessage)
	in.Model.Faults = *faults
	in.Workspace = ws
	runHandle, err := k.StartPrompt(ctx, in)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(env.Stdout, "prompt: %q\nworkflow %s  run %s\n", DemoMessage, runHandle.GetID(), runHandle.GetRunID())
	fmt.Fprintf(env.Stdout, "the scripted model reads, edits, hits a 503 and runs the test; cancel a pending retry with: go run ./starter abort-retry --session %s\n\n", *sessionID)
	code := cli.FollowPrompt(ctx, env, k, *sessionID, runHandle.GetRunID(), false)
	printChanges(env, before, snapshot(ws))
	if ui := st.UIAddress(); ui != "" {
		fmt.Fprintf(env.Stdout, "\nsee it in the Temporal UI: %s/namespaces/%s/workflows/%s/%s/history\n",
			ui, st.Settings.Temporal.Namespace, workflows.WorkflowID(*sessionID), runHandle.GetRunID())
	}
	fmt.Fprintf(env.Stdout, "session file: %s\n", st.Settings.DataDir+"/sessions/"+*sessionID+".jsonl")
	if *keep && ctx.Err() == nil {
		fmt.Fprintln(env.Stdout, "the server and UI keep running; Ctrl-C to stop (state is kept in the data dir for the next start)")
		<-ctx.Done()
	}
	return code
}

// demoSettings are the demo's own settings: the defaults with the demo's
// flags and the DURABLE_AGENT_* variables on top, but no settings file
// unless --config names one. A value persisted for everyday use
// (set-auto-retry off writes retry.enabled: false) must not turn the demo
// of a retry into a failure. note says which file was left unread.
func demoSettings(fs *pflag.FlagSet, env cli.Env) (settings.Settings, string, error) {
	s, err := settings.Load(settings.LoadOptions{Flags: fs, NoDefaultFile: true})
	if err != nil {
		return s, "", err
	}
	if f := fs.Lookup(settings.ConfigFlag); f != nil && f.Changed {
		return s, "", nil
	}
	note := ""
	if _, err := os.Stat(s.File()); err == nil {
		note = "runs with its own settings: " + s.File() + " is not read (flags and DURABLE_AGENT_* variables are)"
	}
	return s, note, nil
}

// demoWorkspace returns the job's workspace: dir, or a new temporary
// directory holding the demo's files.
func demoWorkspace(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	ws, err := os.MkdirTemp("", "durable-agent-demo-")
	if err != nil {
		return "", fmt.Errorf("create the demo workspace: %w", err)
	}
	for name, text := range demoFiles {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			return "", fmt.Errorf("create the demo workspace: %w", err)
		}
	}
	return ws, nil
}

// snapshot reads the workspace's top-level files.
func snapshot(dir string) map[string]string {
	out := map[string]string{}
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if de.Type().IsRegular() {
			if b, err := os.ReadFile(filepath.Join(dir, de.Name())); err == nil && len(b) < 1<<20 {
				out[de.Name()] = string(b)
			}
		}
	}
	return out
}

// printChanges shows what the job changed in the workspace, line by line.
func printChanges(env cli.Env, before, after map[string]string) {
	head := "\nwhat changed in the workspace:"
	for _, n := range slices.Sorted(maps.Keys(after)) {
		old, existed := before[n]
		if existed && old == after[n] {
			continue
		}
		if head != "" {
			fmt.Fprintln(env.Stdout, head)
			head = ""
		}
		fmt.Fprintf(env.Stdout, "  %s:\n", n)
		o, nw := strings.Split(old, "\n"), strings.Split(after[n], "\n")
		size := max(len(o), len(nw)) // the shorter side padded with empty lines
		o, nw = append(o, make([]string, size-len(o))...), append(nw, make([]string, size-len(nw))...)
		for i := range o {
			if o[i] == nw[i] {
				continue
			}
			if existed && o[i] != "" {
				fmt.Fprintf(env.Stdout, "    - %s\n", o[i])
			}
			if nw[i] != "" {
				fmt.Fprintf(env.Stdout, "    + %s\n", nw[i])
			}
		}
	}
	if head != "" {
		fmt.Fprintln(env.Stdout, "\nnothing changed in the workspace")
	}
}

// ownQueueIfServed: when a server already runs at temporal.address and a
// worker polls the demo's task queue there, that worker (of any data dir)
// would take the job's activities and write the session under its own
// data dir, and the session file the demo names would not exist. The
// demo then moves to a task queue of its own, named after its data dir,
// so that its worker alone runs the job, and says so.
func ownQueueIfServed(ctx context.Context, s *settings.Settings) string {
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := client.DialLocal(pctx, *s, slog.New(slog.DiscardHandler))
	if err != nil {
		return "" // no server there: the demo starts its own
	}
	defer c.Close()
	k, err := client.NewController(c, *s)
	if err != nil {
		return ""
	}
	if n, err := k.Polled(pctx); err != nil || n == 0 {
		return ""
	}
	old := s.Temporal.TaskQueue
	s.Temporal.TaskQueue = fmt.Sprintf("%s-demo-%08x", old, crc32.ChecksumIEEE([]byte(s.DataDir)))
	return fmt.Sprintf("a worker already polls task queue %s on the server at %s (its data dir may not be %s); the demo runs on task queue %s so that its own worker writes the session under %s",
		old, s.Temporal.Address, s.DataDir, s.Temporal.TaskQueue, s.DataDir)
}
