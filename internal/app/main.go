package app

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/settings"
)

// ErrNoModelProvider is CheckModelProvider's refusal.
var ErrNoModelProvider = errors.New("no model provider configured: set model.provider to anthropic or openai " +
	"(DURABLE_AGENT_MODEL_PROVIDER, --model.provider or the settings file), or set it to scripted on purpose " +
	"to answer with the offline fake; only worker --dev defaults to the fake")

// CheckModelProvider refuses a worker for a real cluster (not --dev) whose
// model.provider is scripted only because nothing else was configured: it
// would answer every prompt with the scripted fake. source is where
// model.provider came from (settings.Source; "" for the built-in
// default). Setting model.provider: scripted explicitly is the opt-in.
func CheckModelProvider(s settings.Settings, source string) error {
	if s.Model.Provider == "scripted" && source == "" {
		return ErrNoModelProvider
	}
	return nil
}

// WorkerMain is what a worker main (worker, worker-cluster) does with its
// arguments: parse fs (the settings' flags are added here) and refuse
// positional arguments (noArgs completes the error line), load the
// settings, name the set settings the worker does not read (reads; once
// for the same settings: explainUnread),
// refuse a model provider left at the scripted default when
// needsProvider says so after parsing, then run start until SIGINT or
// SIGTERM and call the stop it returned. Errors go to stderr on one line;
// the exit code is 2 for a bad start, 1 for a failed stop.
func WorkerMain(args []string, fs *pflag.FlagSet, noArgs string, reads func(settings.KeyInfo) bool, needsProvider func() bool,
	start func(ctx context.Context, s settings.Settings) (stop func() error, err error)) int {
	settings.AddFlags(fs)
	version := fs.Bool("version", false, "print the version and exit")
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return fail(err)
	}
	if fs.NArg() > 0 {
		return fail(fmt.Errorf("unexpected argument %q%s", fs.Arg(0), noArgs))
	}
	if *version {
		fmt.Println(fs.Name(), agent.Version)
		return 0
	}
	s, values, err := settings.Explain(settings.LoadOptions{Flags: fs})
	if err != nil {
		return fail(err)
	}
	explainUnread(os.Stderr, s, values, reads)
	if needsProvider() {
		// Outside --dev the scripted fake must be asked for by name.
		src, err := settings.Source(values, "model.provider")
		if err == nil {
			err = CheckModelProvider(s, src)
		}
		if err != nil {
			return fail(err)
		}
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	stop, err := start(ctx, s)
	if err != nil {
		return fail(err)
	}
	// Which queue this worker takes work from, so that a person running
	// several can tell them apart (a session's tool calls go to its host).
	host := ""
	if h := ToolHost(s); h != "" {
		host = ", tool host " + h
	}
	fmt.Printf("worker running on task queue %s%s; Ctrl-C to stop\n", s.Temporal.TaskQueue, host)
	<-ctx.Done()
	fmt.Println("worker: stopping")
	if err := stop(); err != nil {
		fmt.Fprintf(os.Stderr, "worker: stop: %v\n", err)
		return 1
	}
	return 0
}

// explainedFile, in the data dir, is explainUnread's memory: the
// fingerprints of the latest maxExplained explanations, one a line.
const explainedFile, maxExplained = "explained-settings", 32

// explainUnread names, one line each, the settings the worker was given
// (flag, environment or settings file) and does not read (reads), such as
// tools.requireApproval, which each prompt carries, with where each takes
// effect: not ignored in silence, and yet said once, not on every start
// of a worker whose settings file sets them. It is said again when the
// explanation would differ: the settings file's bytes, or an unread
// key's value or origin, changed. `starter settings` says it on demand.
// Where the data dir cannot be written it is said on every start.
func explainUnread(w io.Writer, s settings.Settings, values []settings.Value, reads func(settings.KeyInfo) bool) {
	lines := settings.Unread(values, "the worker", reads)
	if len(lines) == 0 {
		return
	}
	h := sha256.New()
	file, _ := os.ReadFile(s.File()) // Load read it: it is small
	h.Write(file)
	fmt.Fprintln(h, strings.Join(lines, "\n"))
	for i, k := range settings.Keys() { // values are in schema order
		if !reads(k) {
			fmt.Fprintln(h, values[i].Value)
		}
	}
	fp := fmt.Sprintf("%x", h.Sum(nil)[:16])
	path := filepath.Join(s.DataDir, explainedFile)
	b, _ := os.ReadFile(path)
	seen := strings.Fields(string(b))
	if slices.Contains(seen, fp) {
		return
	}
	for _, l := range lines {
		fmt.Fprintf(w, "worker: warning: %s\n", l)
	}
	fmt.Fprintf(w, "worker: (said once for these settings, again when they change; starter settings lists them)\n")
	seen = append(seen[max(len(seen)-maxExplained+1, 0):], fp)
	if os.MkdirAll(s.DataDir, 0o700) == nil {
		_ = os.WriteFile(path, []byte(strings.Join(seen, "\n")+"\n"), 0o600)
	}
}
