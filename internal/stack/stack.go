// Package stack runs the whole product in one process: optionally the
// embedded Temporal dev server (with its Web UI), and the worker. The
// worker main (`worker --dev`) and the one-command demo use it.
package stack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/devserver"
	"github.com/durableagent/durableagent/internal/settings"
)

// Stack is a running worker, with the embedded server when it started one.
type Stack struct {
	Settings settings.Settings
	Server   *devserver.Server // nil when an existing server is used
	app.Running
}

// Options say what to start.
type Options struct {
	// Dev starts the embedded server. With ReuseServer, an already
	// reachable server at temporal.address is used instead.
	Dev         bool
	ReuseServer bool
	// Logger for the server and SDK (nil: warnings to stderr).
	Logger *slog.Logger
	// Out receives the one-line addresses banner (nil: nothing).
	Out io.Writer
	// CodecServer is the loopback address to serve the payload codec at,
	// for the Web UI (see app.ServeCodec; on by default with Dev).
	CodecServer string
	// CodecOrigins are browser origins allowed to call the codec server
	// besides the Web UI's own.
	CodecOrigins []string
}

// CodecServerOff is the Options.CodecServer value that disables it.
const CodecServerOff = app.CodecServerOff

// Start starts what opts asks for and returns once the worker polls.
func Start(ctx context.Context, s settings.Settings, opts Options) (*Stack, error) {
	st := &Stack{Settings: s}
	if opts.Dev {
		if opts.ReuseServer {
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			if c, err := client.DialLocal(pctx, s, slog.New(slog.DiscardHandler)); err == nil {
				st.Client = c
			}
			cancel()
		}
		if st.Client == nil {
			uiPort := s.Dev.UIPort
			if !s.Dev.UI {
				uiPort = devserver.NoUI
			}
			srv, err := devserver.Start(ctx, devserver.Options{
				DataDir:   filepath.Join(s.DataDir, "temporal"),
				IP:        s.Dev.IP,
				Port:      s.Dev.Port,
				UIPort:    uiPort,
				Namespace: s.Temporal.Namespace,
				Logger:    opts.Logger,
				// Its routine warnings stay off the terminal unless
				// dev.log asks for them; the banner names the file.
				LogToStderr: s.Dev.Log,
			})
			if err != nil {
				return nil, err
			}
			st.Server = srv
			st.Settings.Temporal.Address = srv.FrontendAddress()
		}
	}
	if st.Client == nil {
		// The embedded server is plaintext on loopback; a real cluster is
		// dialled with the client profile (TLS, API key).
		dial := client.Dial
		if opts.Dev {
			dial = client.DialLocal
		}
		c, err := dial(ctx, st.Settings, opts.Logger)
		if err != nil {
			st.Close()
			return nil, err
		}
		st.Client = c
	}
	// The codec server is on by default with the embedded server, for its
	// Web UI.
	r, err := app.StartWorker(st.Client, st.Settings, app.Extensions{Dev: opts.Dev}, opts.CodecServer, append(codec.UIOrigins(st.UIAddress()), opts.CodecOrigins...), opts.Logger)
	if err != nil {
		st.Client = nil // closed by StartWorker
		st.Close()
		return nil, err
	}
	st.Running = *r
	if opts.Out != nil {
		fmt.Fprintf(opts.Out, "temporal: %s (namespace %s)", st.Settings.Temporal.Address, st.Settings.Temporal.Namespace)
		if ui := st.UIAddress(); ui != "" {
			fmt.Fprintf(opts.Out, "  web ui: %s", ui)
		}
		fmt.Fprintf(opts.Out, "  task queue: %s  data: %s\n", st.Settings.Temporal.TaskQueue, st.Settings.DataDir)
		if st.Settings.Model.Provider == "scripted" {
			fmt.Fprintln(opts.Out, "model: scripted (offline fake; set model.provider to use a real model)")
		}
		if m := st.Settings.Model; m.MaxConcurrentCalls > 0 || m.CallRate() > 0 {
			// model.maxConcurrentCalls / model.callsPerSecond: the model
			// calls' own queues (app.newModelWorkers).
			fmt.Fprintf(opts.Out, "model calls: on %s-model-<provider>", st.Settings.Temporal.TaskQueue)
			if m.MaxConcurrentCalls > 0 {
				fmt.Fprintf(opts.Out, ", at most %d at once on this worker", m.MaxConcurrentCalls)
			}
			if r := m.CallRate(); r > 0 {
				fmt.Fprintf(opts.Out, ", at most %g per second across workers", r)
			}
			fmt.Fprintln(opts.Out)
		}
		if st.Server != nil && st.Server.LogFile() != "" {
			fmt.Fprintf(opts.Out, "temporal server log: %s (--dev.log prints it here)\n", st.Server.LogFile())
		}
		if st.Codec != nil {
			fmt.Fprintf(opts.Out, "codec server: %s (payloads are encrypted; give this URL to the Web UI as its codec endpoint to read them)\n", st.Codec.URL())
		}
	}
	return st, nil
}

// UIAddress is the Web UI's base URL ("" without an embedded UI; for a
// reused dev server the conventional address is assumed).
func (st *Stack) UIAddress() string {
	if st.Server != nil {
		return st.Server.UIAddress()
	}
	if st.Settings.Dev.UI {
		return fmt.Sprintf("http://%s:%d", st.Settings.Dev.IP, st.Settings.Dev.UIPort)
	}
	return ""
}

// Close stops the worker, the client and the embedded server, in that
// order, so no task is lost mid-flight and SQLite closes cleanly.
func (st *Stack) Close() error {
	st.Running.Close()
	if st.Server != nil {
		err := st.Server.Stop()
		st.Server = nil
		return err
	}
	return nil
}
