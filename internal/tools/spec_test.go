package tools

import (
	"math"
	"testing"
	"time"
)

// The activity timeout of a bash call never overflows, whatever the
// call's timeout or the prompt's tools.bashTimeoutMs, and is at most the
// maximum plus the margin.
// Spec 13.4.8.
func TestSpecCallTimeout(t *testing.T) {
	bash := SpecOf(Bash)
	limit := MaxBashTimeout + timeoutMargin
	for _, tc := range []struct {
		name string
		sec  float64
		ms   int64
		want time.Duration
	}{
		{"none", 0, 0, DefaultBashTimeout},
		{"the call's timeout", 90, 0, 90*time.Second + timeoutMargin},
		{"the call's timeout over bashTimeoutMs", 90, 5000, 90*time.Second + timeoutMargin},
		{"bashTimeoutMs", 0, 5000, 5*time.Second + timeoutMargin},
		{"the maximum", MaxBashTimeout.Seconds(), 0, limit},
		{"9.3e9 s", 9.3e9, 0, limit},
		{"+Inf", math.Inf(1), 0, limit},
		{"NaN", math.NaN(), 0, DefaultBashTimeout},
		{"negative", -5, 0, DefaultBashTimeout},
		{"huge bashTimeoutMs", 0, math.MaxInt64, limit},
	} {
		if got := bash.CallTimeout(tc.sec, tc.ms); got != tc.want || got <= 0 {
			t.Errorf("%s: CallTimeout(%v, %d) = %v, want %v", tc.name, tc.sec, tc.ms, got, tc.want)
		}
	}
	// A tool without a timeout argument has its fixed timeout.
	if got := SpecOf(Read).CallTimeout(90, 5000); got != DefaultTimeout {
		t.Errorf("read: CallTimeout = %v, want %v", got, DefaultTimeout)
	}
}

// Each tool's spec: the read-only tools run in parallel, bash runs once,
// the others may be tried three times; every call is an activity, and an
// unknown name gets the default spec.
func TestSpecOf(t *testing.T) {
	for _, tc := range []struct {
		name     string
		readOnly bool
		attempts int32
	}{
		{Read, true, 3}, {Grep, true, 3}, {Find, true, 3}, {Ls, true, 3},
		{Write, false, 3}, {Edit, false, 3}, {Bash, false, 1}, {"nosuchtool", false, 3},
	} {
		s := SpecOf(tc.name)
		if s.ReadOnly != tc.readOnly || s.Attempts != tc.attempts || s.Kind != KindActivity {
			t.Errorf("%s: spec %+v, want readOnly %v, %d attempts, an activity", tc.name, s, tc.readOnly, tc.attempts)
		}
	}
}

// An MCP server's tool runs at most once as an activity (its client
// retries only what the server says is safe), and tools.enabled enables
// it by name or by a glob of its server; a glob never enables a built-in.
func TestSpecOf_MCPToolOnceAndEnabledByGlob(t *testing.T) {
	if s := SpecOf("mcp__fs__write_file"); s.Attempts != 1 || s.ReadOnly || s.Kind != KindActivity {
		t.Fatalf("spec of an MCP tool: %+v, want one attempt", s)
	}
	list := []string{"read", "mcp__fs__*", "mcp__gh__get_issue"}
	for name, want := range map[string]bool{"read": true, "mcp__fs__write_file": true, "mcp__gh__get_issue": true,
		"mcp__gh__create_issue": false, "mcp__fsx__read": false, "bash": false} {
		if got := Enabled(list, name); got != want {
			t.Errorf("Enabled(%v, %q) = %v, want %v", list, name, got, want)
		}
	}
	if Enabled([]string{"*"}, "bash") {
		t.Error("a glob enabled a built-in tool")
	}
}
