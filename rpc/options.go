package rpc

import (
	"io"
	"time"
)

// DefaultRequestTimeout bounds how long a request waits for its response.
const DefaultRequestTimeout = 30 * time.Second

// DefaultCloseTimeout is how long Close waits for the process to exit
// after closing its stdin before it kills it.
const DefaultCloseTimeout = 10 * time.Second

// Option configures Start.
type Option func(*options)

type options struct {
	path           string
	args           []string
	session        string
	extra          []string
	env            []string
	dir            string
	stderr         io.Writer
	trace          io.Writer
	requestTimeout time.Duration
	closeTimeout   time.Duration
}

func defaultOptions() options {
	return options{path: "starter", requestTimeout: DefaultRequestTimeout, closeTimeout: DefaultCloseTimeout}
}

// argv is the command line to run.
func (o options) argv() (string, []string) {
	if o.args != nil {
		return o.path, o.args
	}
	args := []string{"rpc"}
	if o.session != "" {
		args = append(args, "--session", o.session)
	}
	return o.path, append(args, o.extra...)
}

// WithSession sets the session of the default command line
// (`starter rpc --session ID`). Without it the process starts a new
// session in its working directory (WithDir), whose id GetState reports;
// WithArgs("-c") continues the newest session of that directory instead.
func WithSession(id string) Option { return func(o *options) { o.session = id } }

// WithStarter sets the starter binary of the default command line
// (default "starter", looked up in PATH).
func WithStarter(path string) Option { return func(o *options) { o.path = path } }

// WithArgs appends arguments to the default command line, e.g. settings
// flags: WithArgs("--data-dir", dir, "--temporal.address", addr).
func WithArgs(args ...string) Option {
	return func(o *options) { o.extra = append(o.extra, args...) }
}

// WithCommand replaces the whole command line: the client runs path with
// args, which must speak the protocol on stdin and stdout.
func WithCommand(path string, args ...string) Option {
	return func(o *options) { o.path, o.args = path, append([]string{}, args...) }
}

// WithEnv sets the process environment ("KEY=value" entries; nil: this
// process's environment).
func WithEnv(env []string) Option { return func(o *options) { o.env = env } }

// WithDir sets the process's working directory.
func WithDir(dir string) Option { return func(o *options) { o.dir = dir } }

// WithStderr receives the process's stderr (its notes and errors). The
// client also keeps the last lines of it for its error messages.
func WithStderr(w io.Writer) Option { return func(o *options) { o.stderr = w } }

// WithTrace receives every protocol line, prefixed "> " (sent) or "< "
// (received): a transcript of the session.
func WithTrace(w io.Writer) Option { return func(o *options) { o.trace = w } }

// WithRequestTimeout bounds each request (0 or less: no bound besides the
// request's context).
func WithRequestTimeout(d time.Duration) Option { return func(o *options) { o.requestTimeout = d } }

// WithCloseTimeout bounds how long Close waits for the process to exit.
func WithCloseTimeout(d time.Duration) Option { return func(o *options) { o.closeTimeout = d } }
