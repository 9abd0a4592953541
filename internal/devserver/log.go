package devserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	"go.uber.org/zap/zapcore"
)

// logFileName is the default log's file in the data dir.
const logFileName = "server.log"

// defaultLogger is used when Options.Logger is nil: warnings and errors are
// appended to <dir>/server.log (returned, to be closed on Stop), so a
// healthy run's routine warnings stay off the terminal of the program
// that embeds the server yet a broken server leaves a trace; toStderr
// sends them to stderr instead. Nothing below Warn is written.
func defaultLogger(dir string, toStderr bool) (*slog.Logger, *os.File, error) {
	opts := &slog.HandlerOptions{Level: slog.LevelWarn}
	if toStderr {
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil, nil
	}
	f, err := os.OpenFile(filepath.Join(dir, logFileName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("devserver: open log file: %w", err)
	}
	return slog.New(slog.NewTextHandler(f, opts)), f, nil
}

// logGate is the filter shared by every logger derived for one Server, so
// that Stop can quiet them all at once. It passes Warn and above.
type logGate struct{ stopping atomic.Bool }

// quiet is called when shutdown begins. The server warns routinely while its
// services go away one by one, and reports the requests that shutdown
// cancels as errors; neither is news to the user of a dev server. Other
// errors still get through.
func (g *logGate) quiet() { g.stopping.Store(true) }

func (g *logGate) allows(level slog.Level, tags []tag.Tag) bool {
	if !g.stopping.Load() {
		return level >= slog.LevelWarn
	}
	return level >= slog.LevelError && !mentionsCancellation(tags)
}

// mentionsCancellation reports whether a tag carries a context-canceled
// error. The server flattens errors into strings (as tag values and inside
// service errors), so the text is what can be checked.
func mentionsCancellation(tags []tag.Tag) bool {
	for _, t := range tags {
		switch v := t.Value().(type) {
		case error:
			if errors.Is(v, context.Canceled) || strings.Contains(v.Error(), context.Canceled.Error()) {
				return true
			}
		case string:
			if strings.Contains(v, context.Canceled.Error()) {
				return true
			}
		}
	}
	return false
}

// serverLogger adapts a *slog.Logger to the server's log.Logger, filtered by
// the Server's logGate. Fatal and Panic records are also kept in fatal
// (when set), so that Start can tell a server that could not be built.
type serverLogger struct {
	log   *slog.Logger
	gate  *logGate
	fatal *fatalLog
}

// fatalLog keeps, as an error, the first Fatal or Panic record a server
// logged (later ones are most often consequences of the first).
type fatalLog struct {
	first atomic.Pointer[error]
}

// record keeps msg, wrapping the first error among tags, unless a record
// is kept already.
func (f *fatalLog) record(msg string, tags []tag.Tag) {
	if f == nil {
		return
	}
	err := fmt.Errorf("devserver: build server: %s", msg)
	for _, t := range tags {
		// The server's error tags are zap fields that hold the error
		// itself; Value would give only its text.
		if zt, ok := t.(tag.ZapTag); ok && zt.Field().Type == zapcore.ErrorType {
			if e, ok := zt.Field().Interface.(error); ok && e != nil {
				err = fmt.Errorf("devserver: build server: %s: %w", msg, e)
				break
			}
		}
	}
	f.first.CompareAndSwap(nil, &err)
}

// err returns the kept record's error, or nil.
func (f *fatalLog) err() error {
	if p := f.first.Load(); p != nil {
		return *p
	}
	return nil
}

// The server finds With by a type assertion: say that it is there.
var _ log.WithLogger = serverLogger{}

func (l serverLogger) Debug(msg string, tags ...tag.Tag) { l.emit(slog.LevelDebug, msg, tags) }
func (l serverLogger) Info(msg string, tags ...tag.Tag)  { l.emit(slog.LevelInfo, msg, tags) }
func (l serverLogger) Warn(msg string, tags ...tag.Tag)  { l.emit(slog.LevelWarn, msg, tags) }
func (l serverLogger) Error(msg string, tags ...tag.Tag) { l.emit(slog.LevelError, msg, tags) }

// DPanic, Panic and Fatal only log: an embedded server must not panic or exit
// the host program; the failure surfaces through Start or the client instead.
// Panic and Fatal are also recorded: the server goes on past them as if
// they had not returned (a listener that failed to bind is nil), so Start
// must not start a server that logged one while it was built.
func (l serverLogger) DPanic(msg string, tags ...tag.Tag) { l.emit(slog.LevelError, msg, tags) }
func (l serverLogger) Panic(msg string, tags ...tag.Tag) {
	l.fatal.record(msg, tags)
	l.emit(slog.LevelError, msg, tags)
}
func (l serverLogger) Fatal(msg string, tags ...tag.Tag) {
	l.fatal.record(msg, tags)
	l.emit(slog.LevelError, msg, tags)
}

// With returns a logger that prepends tags to every record; implementing it
// spares the server its slower generic wrapper.
func (l serverLogger) With(tags ...tag.Tag) log.Logger {
	return serverLogger{log: l.log.With(tagsToArgs(tags)...), gate: l.gate, fatal: l.fatal}
}

func (l serverLogger) emit(level slog.Level, msg string, tags []tag.Tag) {
	ctx := context.Background()
	if l.gate.allows(level, tags) && l.log.Enabled(ctx, level) {
		l.log.Log(ctx, level, msg, tagsToArgs(tags)...)
	}
}

func tagsToArgs(tags []tag.Tag) []any {
	args := make([]any, len(tags))
	for i, t := range tags {
		args[i] = slog.Any(t.Key(), t.Value())
	}
	return args
}
