// Package demo is `starter demo`: the whole product in one command. It
// starts (or reuses) the embedded Temporal server with its Web UI, starts
// a worker in this process, runs a prompt whose scripted model fails twice
// with retryable errors before answering, prints the retry events live and
// the link to the workflow in the UI.
package demo

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/control"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/stack"
	"github.com/durableagent/durableagent/workflows"
	"github.com/spf13/pflag"
)

// DefaultFaults are the demo's injected model failures: two retryable
// errors (SPEC 2), then the scripted answer.
var DefaultFaults = []string{"503 Service Unavailable", "[529 overloaded_error] Overloaded"}

// DemoMessage is the prompt the demo sends.
const DemoMessage = "Explain in one sentence why a retry that waits on a durable timer survives a crash."

func init() {
	cli.Register(cli.Command{
		Name:    "demo",
		Usage:   "starter demo [--fault TEXT]... [--keep|--keep=false]",
		Summary: "one command: embedded Temporal + Web UI + worker, a prompt that retries twice, live events",
		Run:     run,
	})
}

func run(ctx context.Context, env cli.Env, args []string) int {
	fs := pflag.NewFlagSet("demo", pflag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	sessionID := fs.String("session", fmt.Sprintf("demo-%d", time.Now().Unix()), "session id")
	faults := fs.StringArray("fault", DefaultFaults, "scripted model failures before the answer (repeatable)")
	keep := fs.Bool("keep", isTerminal(os.Stdin), "keep the server and UI running after the prompt until Ctrl-C (default: when run from a terminal)")
	settings.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(env.Stderr, "starter demo: %v\n", err)
		return cli.ExitUsage
	}
	if err := session.ValidateID(*sessionID); err != nil {
		fmt.Fprintf(env.Stderr, "starter demo: --session: %v\n", err)
		return cli.ExitUsage
	}
	if err := scripted.ValidateScript(*faults); err != nil {
		fmt.Fprintf(env.Stderr, "starter demo: %v\n", err)
		return cli.ExitUsage
	}
	s, err := settings.Load(settings.LoadOptions{Flags: fs, Env: env.LookupEnv})
	if err != nil {
		fmt.Fprintf(env.Stderr, "starter demo: %v\n", err)
		return cli.ExitUsage
	}
	if s.Model.Provider != "scripted" {
		fmt.Fprintf(env.Stderr, "starter demo: note: model.provider is %q; the injected faults only apply to the scripted model\n", s.Model.Provider)
	}

	fmt.Fprintln(env.Stdout, "starting the embedded Temporal server, its Web UI and a worker…")
	st, err := stack.Start(ctx, s, stack.Options{Dev: true, ReuseServer: true, Out: env.Stdout})
	if err != nil {
		fmt.Fprintf(env.Stderr, "starter demo: %v\n", err)
		return cli.ExitUsage
	}
	defer st.Close()

	k := &control.Controller{Client: st.Client, TaskQueue: st.Settings.Temporal.TaskQueue}
	in := app.PromptInput(st.Settings, *sessionID, DemoMessage)
	in.Model.Faults = *faults
	runHandle, err := k.StartPrompt(ctx, in)
	if err != nil {
		fmt.Fprintf(env.Stderr, "starter demo: %v\n", err)
		return cli.ExitUsage
	}
	fmt.Fprintf(env.Stdout, "prompt: %q\nworkflow %s  run %s\n", DemoMessage, runHandle.GetID(), runHandle.GetRunID())
	fmt.Fprintf(env.Stdout, "the scripted model will fail with %v, then answer; cancel a pending retry with: go run ./starter abort-retry --session %s\n\n", *faults, *sessionID)
	code := cli.FollowPrompt(ctx, env, k, *sessionID, runHandle.GetRunID(), false)
	if url := st.WorkflowURL(workflows.WorkflowID(*sessionID), runHandle.GetRunID()); url != "" {
		fmt.Fprintf(env.Stdout, "\nsee it in the Temporal UI: %s\n", url)
	}
	fmt.Fprintf(env.Stdout, "session file: %s\n", st.Settings.DataDir+"/sessions/"+*sessionID+".jsonl")
	if *keep && ctx.Err() == nil {
		fmt.Fprintln(env.Stdout, "the server and UI keep running; Ctrl-C to stop (state is kept in the data dir for the next start)")
		<-ctx.Done()
	}
	return code
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
