// Package cli is the starter's command tree: small commands that start a
// prompt and follow it, signal it, and read its state and events. Output
// is text for people and JSON lines with --json for programs. Errors are
// one line on stderr with exit code 2; a prompt that fails or is aborted
// exits 1.
package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/interceptor"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/tracing"
)

// Exit codes.
const (
	ExitOK     = 0
	ExitFailed = 1 // the prompt failed or was aborted
	ExitUsage  = 2 // bad arguments, bad settings, Temporal unreachable, ...
)

// Env is what a command runs against; tests replace its parts.
type Env struct {
	Stdout io.Writer
	Stderr io.Writer
	Stdin  io.Reader
}

// Command is one starter subcommand.
type Command struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, env Env, args []string) int
}

// commands is the command tree (an explicit list, no registry): name,
// the summary usage prints, and the function that runs it.
func commands() []Command {
	return []Command{
		{"abort", "abort the session's running prompt: its retry first, then the model call (signal abort); --terminate ends a prompt whose workflow task keeps failing, which cannot process the abort",
			runAbort},
		{"abort-retry", "cancel the pending retry of the session's running prompt (signal abort_retry)",
			runAbortRetry},
		{"approve", "approve (or --deny) a tool call waiting for approval in the running prompt (update approve_tool)",
			runApprove},
		{"auth", "manage provider credentials in <dataDir>/auth.json (add, list, remove)",
			runAuth},
		{"checkpoints", "list the session's workspace checkpoints: number, time, the turn's tool calls and the paths they changed (run on the worker's host)",
			runCheckpoints},
		{"chat", "chat with the agent in a terminal UI: live output, tool approval (y/n), steer (Enter) and follow-up (Alt+Enter) while it runs, live retry countdown, esc cancels a retry (docs/tui.md)",
			runChat},
		{"classify", "classify error texts from stdin with the retry policy (one JSON line each)",
			runClassify},
		{"cluster", "prepare a Temporal cluster: wait until it serves (wait), create or check the namespace (init)",
			runCluster},
		{"compact", "compact the session now: summarise older messages, keep the recent ones (Compact workflow)",
			runCompact},
		{"diff", "print the diff of a --worktree session's job against its base commit, or with --from N [--to M] between checkpoints (run on the worker's host)",
			runDiff},
		{"events", "print the events of the session's latest prompt (--follow: until it ends)",
			runEvents},
		{"fork", "make a new session from checkpoint N of a session: its conversation up to that turn and a workspace with its files (--worktree: a git worktree); run on the worker's host",
			runFork},
		{"follow-up", "queue MESSAGE for the running prompt: delivered when it would otherwise end (signal follow_up)",
			runFollowUp},
		{"mcp", "list: the MCP servers of mcp.servers and of .mcp.json, the layer that defined each, whether each starts here (in the sandbox, in the current directory) and its tools; tools NAME: a server's tools; allow NAME: let a .mcp.json server start; serve: serve the durable jobs as MCP tools (stdio, or streamable HTTP with --listen)",
			runMCP},
		{"prompt", "run a prompt in a session and print its events live until it ends",
			runPrompt},
		{"queue", "list the running prompt's queued steer and follow-up messages, or edit, rm or clear them before they are delivered (query queue, update edit_queue)",
			runQueue},
		{"rewind", "restore the session's workspace files of checkpoint N and continue its conversation from there; refused while a prompt runs or the workspace has unrecorded changes (--force); undoable (run on the worker's host)",
			runRewind},
		{"rpc", "serve the RPC protocol on stdin/stdout: JSON commands in, responses and live events out (docs/rpc.md)",
			runRPC},
		{"schedule", "run a prompt on a schedule (a Temporal Schedule): create, update, list, describe, pause, unpause, trigger, delete",
			runSchedule},
		{"session", "list, export, import, copy and delete sessions (jsonl and postgres stores)",
			runSession},
		{"sessions", "list sessions, newest first: how the last job ended (or what it waits for), workspace and branch, last prompt, last activity and usage",
			runSessions},
		{"set-auto-retry", "persist retry.enabled in the settings file and tell the running prompt (signal set_auto_retry)",
			runSetAutoRetry},
		{"settings", "show every setting's effective value and where it came from (flag, env, file, default); 'init' writes a commented settings file",
			runSettings},
		{"show", "print one entry of the session whole (a tool result's full output, a message), read through the workers",
			runShow},
		{"state", "show the state of the session's latest prompt (autoRetryEnabled, isRetrying, ...)",
			runState},
		{"steer", "steer the running prompt: after its current tool batch (the calls not started are skipped) it goes on with MESSAGE (signal steer)",
			runSteer},
		{"top", "the running prompts of this task queue: what each does now (model call, tools, backoff until T, approval), turn, tool calls, usage, elapsed; refreshing",
			runTop},
	}
}

// Main runs the starter with args (without the program name): the command
// tree plus extra, the commands a main adds (the demo, which links the
// embedded server).
func Main(args []string, env Env, extra ...Command) int {
	env.Stdout = cmp.Or[io.Writer](env.Stdout, os.Stdout)
	env.Stderr = cmp.Or[io.Writer](env.Stderr, os.Stderr)
	env.Stdin = cmp.Or[io.Reader](env.Stdin, os.Stdin)
	all := append(commands(), extra...)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(env.Stderr, "usage: starter <command> [flags]\n       starter --version\n\ncommands:")
		for _, c := range all {
			fmt.Fprintf(env.Stderr, "  %-15s %s\n", c.Name, c.Summary)
		}
		fmt.Fprintln(env.Stderr, "\nEvery command takes the settings flags (--config FILE, --data-dir DIR, --temporal.address ...); run 'starter settings' for the list.")
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	if args[0] == "--version" || args[0] == "version" {
		fmt.Fprintln(env.Stdout, "starter", agent.Version)
		return ExitOK
	}
	i := slices.IndexFunc(all, func(c Command) bool { return c.Name == args[0] })
	if i < 0 {
		var names []string
		for _, c := range all {
			names = append(names, c.Name)
		}
		fmt.Fprintf(env.Stderr, "starter: unknown command %q%s (run 'starter help')\n", args[0], didYouMean("", args[0], names))
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return all[i].Run(ctx, env, args[1:])
}

// didYouMean is " (did you mean PREFIX+NAME?)" for the name of names
// that name most likely misspells, "" when none is close.
func didYouMean(prefix, name string, names []string) string {
	if s := settings.Suggest(name, names); s != "" {
		return " (did you mean " + prefix + s + "?)"
	}
	return ""
}

// common are the flags every command shares.
type common struct {
	fs      *pflag.FlagSet
	session string
	json    bool
	// traces exports the starter's spans (OTEL_EXPORTER_OTLP_ENDPOINT set;
	// nil otherwise), set by dial.
	traces *tracing.Provider
	// env is the command's; k is its Temporal client once dialled (by
	// dialed, or by reader for a read before it).
	env Env
	k   *client.Controller
	// header is readHeader's answer for headerOf, read once per command.
	header    *session.Header
	headerOf  string
	headerErr error
}

func newFlags(name string, env Env) *common {
	c := bareFlags(name, env)
	c.fs.StringVar(&c.session, "session", "", "session id (default: prompt and chat start a new session; other commands take the newest session of the current directory)")
	c.fs.BoolVar(&c.json, "json", false, "print JSON (one object per line)")
	return c
}

// bareFlags are the settings flags alone (auth, which takes no session).
func bareFlags(name string, env Env) *common {
	c := &common{fs: pflag.NewFlagSet(name, pflag.ContinueOnError), env: env}
	c.fs.SetOutput(env.Stderr)
	settings.AddFlags(c.fs)
	for _, k := range settings.Keys() { // out of the usage: checkWorkerFlags rejects them
		if starterIgnores(name, k) {
			_ = c.fs.MarkHidden(strings.TrimPrefix(k.Flag, "--"))
		}
	}
	return c
}

// workerKeysUsed are the worker-only keys a command reads all the same,
// by prefix: `session` opens the session stores itself, `rpc` and `chat`
// read messages through the store of session.store, `auth list` reads the
// rate-limit windows kept there (postgres), and `settings` shows every
// key.
var workerKeysUsed = map[string]string{
	"auth list": "session.",
	"session":   "session.",
	"sessions":  "session.",
	"rpc":       "session.",
	"chat":      "session.",
	"settings":  "",
	"mcp":       "",
}

// starterIgnores says whether command cmd ("auth list" itself, else
// "session list" as session) does not read key.
func starterIgnores(cmd string, k settings.KeyInfo) bool {
	if k.Scope == settings.ScopeShared || k.Scope == settings.ScopePrompt {
		return false
	}
	prefix, ok := workerKeysUsed[cmd]
	if !ok {
		name, _, _ := strings.Cut(cmd, " ")
		prefix, ok = workerKeysUsed[name]
	}
	return !ok || !strings.HasPrefix(k.Key, prefix)
}

// checkWorkerFlags refuses a settings flag the command would ignore in
// silence: a worker-only key (the worker's providers, tools policy,
// session store, scripted model and dev server) or one no program reads.
func checkWorkerFlags(fs *pflag.FlagSet, cmd string) error {
	for _, k := range settings.Keys() {
		f := fs.Lookup(strings.TrimPrefix(k.Flag, "--"))
		if f == nil || !f.Changed || !starterIgnores(cmd, k) {
			continue
		}
		switch {
		case k.Scope == settings.ScopeUnused:
			return fmt.Errorf("%s is not used by the starter or the worker: the worker's auth store chooses each session's credential (starter auth list)", k.Flag)
		case strings.HasPrefix(k.Key, "dev."):
			return fmt.Errorf("%s is a worker setting (the embedded server of worker --dev and the demo); the starter ignores it and connects to --temporal.address", k.Flag)
		default:
			return fmt.Errorf("%s is a worker setting; the starter ignores it (give it to the worker: go run ./worker %s ...)", k.Flag, k.Flag)
		}
	}
	return nil
}

// messageCommands take a MESSAGE after their flags; one that starts with
// "-" goes after "--".
var messageCommands = map[string]bool{"prompt": true, "steer": true, "follow-up": true}

// parse parses args; on error it prints one line and returns false
// (-h/--help prints the flags).
func (c *common) parse(env Env, args []string) bool {
	c.fs.Usage = func() {} // pflag would print every flag for "-hello" ('h')
	if err := c.fs.Parse(args); err != nil {
		name := c.fs.Name()
		if errors.Is(err, pflag.ErrHelp) && askedForHelp(args) {
			fmt.Fprintf(env.Stderr, "usage of starter %s:\n%s", name, c.fs.FlagUsages())
			return false
		}
		msg := err.Error()
		// A single-dash word (pflag: "unknown shorthand flag: 'x' in
		// -xyz", raw bytes and all) is most likely a message.
		if flag, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
			var names []string
			c.fs.VisitAll(func(f *pflag.Flag) {
				if !f.Hidden {
					names = append(names, f.Name)
				}
			})
			msg += didYouMean("--", flag, names)
		} else if arg := unknownDashArg(c.fs, args); arg != "" && !strings.HasPrefix(arg, "--") {
			msg = fmt.Sprintf("unknown flag %q", arg)
			if messageCommands[name] {
				msg += fmt.Sprintf(`; a message that starts with "-" goes after --: starter %s [flags] -- %q`, name, arg)
			}
		}
		fmt.Fprintf(env.Stderr, "starter %s: %s\n", name, msg)
		return false
	}
	if err := checkWorkerFlags(c.fs, c.fs.Name()); err != nil {
		fmt.Fprintf(env.Stderr, "starter %s: %v\n", c.fs.Name(), err)
		return false
	}
	if err := session.ValidateID(c.session); err != nil && c.fs.Changed("session") {
		fmt.Fprintf(env.Stderr, "starter %s: --session: %v\n", c.fs.Name(), err)
		return false
	}
	return true
}

// parseArgs is parse for a command that takes n arguments besides its
// flags (n < 0: any number). want completes the error of a wrong count,
// "want exactly "+want; without arguments (n 0) it is the usage named
// after an unexpected one ("": none).
func (c *common) parseArgs(env Env, args []string, n int, want string) bool {
	if !c.parse(env, args) {
		return false
	}
	if c.fs.NArg() == n || n < 0 {
		return true
	}
	msg := "want exactly " + want
	if n == 0 {
		msg = fmt.Sprintf("unexpected argument %q", c.fs.Arg(0))
		if want != "" {
			msg += " (usage: " + want + ")"
		}
	}
	fmt.Fprintf(env.Stderr, "starter %s: %s\n", c.fs.Name(), msg)
	return false
}

// askedForHelp: -h or --help is one of args (before "--").
func askedForHelp(args []string) bool {
	if i := slices.Index(args, "--"); i >= 0 {
		args = args[:i]
	}
	return slices.Contains(args, "-h") || slices.Contains(args, "--help")
}

// unknownDashArg is the first of args (before "--") that looks like a
// flag and is none of fs's, "" when there is none. A value of a flag that
// takes one is skipped.
func unknownDashArg(fs *pflag.FlagSet, args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return ""
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		var f *pflag.Flag
		if name, ok := strings.CutPrefix(a, "--"); ok {
			name, _, hasValue := strings.Cut(name, "=")
			if f = fs.Lookup(name); f != nil && !hasValue && f.NoOptDefVal == "" {
				i++ // its value
			}
		} else if len(a) == 2 {
			if f = fs.ShorthandLookup(a[1:]); f != nil && f.NoOptDefVal == "" {
				i++
			}
		}
		if f == nil {
			return a
		}
	}
	return ""
}

func (c *common) settings(env Env) (settings.Settings, bool) {
	s, err := settings.Load(settings.LoadOptions{Flags: c.fs})
	if err == nil {
		err = c.impliedSession(s)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "starter %s: %v\n", c.fs.Name(), err)
		return s, false
	}
	return s, true
}

// dialed loads the settings, dials Temporal and returns what fn returns
// with the client, closed after it (ExitUsage, said on stderr, when the
// settings or the dial fail).
func (c *common) dialed(ctx context.Context, fn func(k *client.Controller, s settings.Settings) int) int {
	s, ok := c.settings(c.env)
	if !ok {
		return ExitUsage
	}
	defer c.closeReader()
	k, err := c.reader(ctx, s)
	if err != nil {
		return fail(c.env, c.fs.Name(), err)
	}
	// A follower waits through a worker outage; say so once, on stderr.
	k.OnWait = func(msg string) { fmt.Fprintf(c.env.Stderr, "starter: %s\n", msg) }
	return fn(k, s)
}

// reader is the command's Temporal client, dialled at the first need:
// sessions are read through the workers (client.Controller.ReadSession),
// so a command that reads one before it starts anything dials first.
func (c *common) reader(ctx context.Context, s settings.Settings) (*client.Controller, error) {
	if c.k == nil {
		k, err := c.dial(ctx, c.env, s)
		if err != nil {
			return nil, err
		}
		c.k = k
	}
	return c.k, nil
}

// closeReader closes the client reader dialled, if it did, and flushes
// the command's spans.
func (c *common) closeReader() {
	if c.k != nil {
		c.k.Client.Close()
	}
	c.traces.Shutdown()
}

// dial dials Temporal. When OTEL_EXPORTER_OTLP_ENDPOINT (or
// _TRACES_ENDPOINT) is set it first sets c.traces and dials with the
// client interceptor that carries the trace context into the workflows
// the starter starts.
func (c *common) dial(ctx context.Context, env Env, s settings.Settings) (*client.Controller, error) {
	var ics []interceptor.ClientInterceptor
	tp, err := tracing.FromEnv(ctx, "durable-agent-starter")
	if err != nil {
		return nil, err
	}
	if tp != nil {
		ti, err := tp.Interceptor()
		if err != nil {
			tp.Shutdown()
			return nil, err
		}
		c.traces, ics = tp, []interceptor.ClientInterceptor{ti}
	}
	cl, err := client.DialEnv(ctx, s, nil, nil, ics...)
	if err == nil {
		var k *client.Controller
		if k, err = client.NewController(cl, s); err == nil {
			return k, nil
		}
		cl.Close()
	}
	c.traces.Shutdown()
	return nil, err
}

// span starts the command's root span when tracing is on and says its
// trace id on stderr, so a user can find the prompt's trace; without
// tracing it is ctx's (no-op) span.
func (c *common) span(ctx context.Context, env Env, name string) (context.Context, trace.Span) {
	if c.traces == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	ctx, sp := c.traces.Start(ctx, name, attribute.String("durableagent.session", c.session))
	fmt.Fprintf(env.Stderr, "trace: %s\n", sp.SpanContext().TraceID())
	return ctx, sp
}

// fail prints a one-line error for a command and returns ExitUsage.
func fail(env Env, cmd string, err error) int {
	fmt.Fprintf(env.Stderr, "starter %s: %s\n", cmd, line.First(err.Error()))
	return ExitUsage
}
