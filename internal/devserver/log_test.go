package devserver

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/server/common/log/tag"
)

// Server logs reach the caller's logger at Warn and above; once Stop begins,
// warnings and errors caused by the shutdown's own cancellations are dropped
// while other errors still get through.
func TestServerLogger_WarnAndAboveAndQuietShutdown(t *testing.T) {
	canceled := tag.Error(errors.Join(errors.New("poll failed"), context.Canceled))
	tests := []struct {
		name     string
		stopping bool
		log      func(serverLogger)
		want     bool
	}{
		{"info dropped", false, func(l serverLogger) { l.Info("info msg") }, false},
		{"warn kept", false, func(l serverLogger) { l.Warn("warn msg") }, true},
		{"error kept", false, func(l serverLogger) { l.Error("error msg") }, true},
		{"fatal logged, not exited", false, func(l serverLogger) { l.Fatal("fatal msg") }, true},
		{"cancel error kept while running", false, func(l serverLogger) { l.Error("cancel msg", canceled) }, true},
		{"warn dropped while stopping", true, func(l serverLogger) { l.Warn("warn msg") }, false},
		{"cancel error dropped while stopping", true, func(l serverLogger) { l.Error("cancel msg", canceled) }, false},
		{"cancel text dropped while stopping", true, func(l serverLogger) {
			l.Error("text msg", tag.NewStringTag("error", "CreateTaskQueue failed. Error: context canceled"))
		}, false},
		{"other error kept while stopping", true, func(l serverLogger) { l.Error("disk msg", tag.Error(errors.New("disk full"))) }, true},
		{"derived logger shares the gate", true, func(l serverLogger) {
			l.With(tag.NewStringTag("service", "history")).Warn("warn msg")
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			gate := new(logGate)
			l := serverLogger{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), gate: gate}
			if tt.stopping {
				gate.quiet()
			}
			tt.log(l)
			if got := strings.Contains(buf.String(), "msg"); got != tt.want {
				t.Errorf("logged = %v, want %v (output %q)", got, tt.want, buf.String())
			}
		})
	}
}

// Without a logger of the caller's, the server's warnings and errors go
// to <DataDir>/server.log, not to the terminal of the program that embeds
// it; LogToStderr asks for the terminal instead.
func TestDefaultLogger_FileUnlessStderr(t *testing.T) {
	dir := t.TempDir()
	lg, f, err := defaultLogger(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	l := serverLogger{log: lg, gate: new(logGate)}
	l.Info("routine info")
	l.Warn("shard ownership lost", tag.NewStringTag("service", "history"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f.Name() != filepath.Join(dir, "server.log") {
		t.Fatalf("log file %s", f.Name())
	}
	b, err := os.ReadFile(f.Name())
	if err != nil || !strings.Contains(string(b), "shard ownership lost") || strings.Contains(string(b), "routine info") {
		t.Fatalf("log file: %q, %v", b, err)
	}
	if _, f, err := defaultLogger(dir, true); f != nil || err != nil {
		t.Fatalf("LogToStderr opened %v (%v)", f, err)
	}
}

// A server started without a logger names its log file, in its data dir.
func TestServer_LogFileInDataDir(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	s, err := Start(ctx, Options{DataDir: dir, Port: 0, UIPort: NoUI})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer s.Stop()
	if want := filepath.Join(dir, "server.log"); s.LogFile() != want {
		t.Fatalf("LogFile %q, want %q", s.LogFile(), want)
	}
	if _, err := os.Stat(s.LogFile()); err != nil {
		t.Fatal(err)
	}
}
