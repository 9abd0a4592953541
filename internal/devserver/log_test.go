package devserver

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
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
			gate.level.Set(slog.LevelWarn)
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
