package pgtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Fatalf and Skip instead of ending
// the goroutine.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }
func (r *recorder) Skip(args ...any)                  { r.skip = fmt.Sprint(args...) }

// Without PostgreSQL a test skips on a developer's machine, but fails
// with the reason in CI (PGTEST_REQUIRED, or CI as CI services set it),
// so a green CI run cannot hide skipped PostgreSQL and cluster tests.
func TestUnavailable_SkipsOrFailsInCI(t *testing.T) {
	const reason = "no PostgreSQL server binaries (initdb, postgres)"
	for _, tc := range []struct {
		name     string
		required string // PGTEST_REQUIRED ("-": unset)
		ci       string // CI ("-": unset)
		fails    bool
	}{
		{name: "developer machine", required: "-", ci: "-"},
		{name: "required by .ci/run", required: "1", ci: "-", fails: true},
		{name: "required true", required: "true", ci: "-", fails: true},
		{name: "CI service", required: "-", ci: "true", fails: true},
		{name: "CI=1", required: "-", ci: "1", fails: true},
		{name: "CI=false", required: "-", ci: "false"},
		{name: "CI empty", required: "-", ci: ""},
		{name: "CI but explicitly not required", required: "0", ci: "true"},
		{name: "unreadable value requires", required: "yes please", ci: "-", fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range map[string]string{EnvRequired: tc.required, "CI": tc.ci} {
				t.Setenv(k, "")
				if v == "-" {
					unsetenv(t, k)
				} else {
					t.Setenv(k, v)
				}
			}
			r := &recorder{TB: t}
			unavailable(r, reason)
			switch {
			case tc.fails && (r.fatal == "" || r.skip != ""):
				t.Fatalf("fatal %q skip %q; want the test failed", r.fatal, r.skip)
			case tc.fails && (!strings.Contains(r.fatal, reason) || !strings.Contains(r.fatal, EnvRequired)):
				t.Errorf("failure %q does not give the reason and the variable", r.fatal)
			case !tc.fails && (r.skip != reason || r.fatal != ""):
				t.Fatalf("fatal %q skip %q; want a skip with the reason", r.fatal, r.skip)
			}
		})
	}
}

// unsetenv removes k for the test (t.Setenv before it restores it).
func unsetenv(t *testing.T, k string) {
	t.Helper()
	if err := os.Unsetenv(k); err != nil {
		t.Fatal(err)
	}
}
