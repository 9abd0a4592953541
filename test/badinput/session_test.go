package badinput

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/session"
)

const (
	header   = `{"type":"session","version":1,"id":"s","timestamp":"2025-03-04T05:06:07Z"}` + "\n"
	userLine = `{"type":"message","id":"u","timestamp":"2025-03-04T05:06:07Z","message":{"role":"user","content":[{"type":"text","text":"fix it"}]}}` + "\n"
	answer   = `{"type":"message","id":"a","parentId":"u","timestamp":"2025-03-04T05:06:07Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop"}}` + "\n"
)

// issue 7: damaged session files. Lines that cannot be entries are skipped
// with a warning naming the line (the rest of the session stays readable);
// a file whose header is unusable fails with an error naming the problem;
// a session that does not exist is "not found" with its id.
func TestSession_DamagedFilesNamedProblemRestReadable(t *testing.T) {
	cases := []struct {
		name string
		file string
		// ids are the entries that must still load ("" when Load fails).
		ids string
		// want is in the error (when Load fails) or in a warning.
		want string
	}{
		{"torn last line", header + userLine + answer[:50], "u", "line 3: incomplete last line"},
		{"torn last line of one byte", header + userLine + "{", "u", "line 3: incomplete last line (1 bytes"},
		{"garbage line in the middle", header + "#!garbage\n" + userLine + answer, "u,a", "line 2: not JSON, skipped"},
		{"binary line in the middle", header + "\x00\xff\xfe\n" + userLine, "u", "line 2: not JSON, skipped"},
		{"JSON that is not an entry", header + userLine + "[1,2]\n" + answer, "u,a", "line 3: a JSON array, not an entry object, skipped"},
		{"entry without an id", header + `{"type":"message","message":{"role":"user"}}` + "\n" + userLine, "u", "line 2: entry has no id, skipped"},
		{"message entry without a message", header + `{"type":"message","id":"m"}` + "\n" + userLine, "u", `line 2: message entry "m" has no message, skipped`},
		{"duplicate entry id", header + userLine + userLine + answer, "u,a", `line 3: duplicate entry id "u", skipped`},
		{"wrong field type", header + `{"type":"message","id":7}` + "\n" + userLine, "u", `line 2: field "id" has the wrong type (a JSON number, want string), skipped`},
		{"header id differs", strings.Replace(header, `"id":"s"`, `"id":"other"`, 1) + userLine, "u", `header id "other" differs from session id "s"`},
		{"empty file", "", "", "session not found"},
		{"torn header", header[:25], "", "no complete header line"},
		{"header that is not a header", userLine + answer, "", "line 1 is not a session header"},
		{"garbage header", "garbage\n" + userLine, "", "line 1 is not a session header"},
		{"newer format version", strings.Replace(header, `"version":1`, `"version":9`, 1) + userLine, "", "session header has format version 9, newer than this build reads (up to 3)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := session.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(st.Path("s"), []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			sess, err := st.Load("s")
			if tc.ids == "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"s"`) {
					t.Fatalf("Load error %v; want one naming session \"s\" and %q", err, tc.want)
				}
				t.Logf("error: %v", err)
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			var got []string
			for _, e := range sess.Entries {
				got = append(got, e.ID)
			}
			if strings.Join(got, ",") != tc.ids {
				t.Errorf("entries %v, want %s", got, tc.ids)
			}
			if w := strings.Join(sess.Warnings, "\n"); !strings.Contains(w, tc.want) {
				t.Errorf("warnings %q, want one with %q", sess.Warnings, tc.want)
			}
			t.Logf("warnings: %q", sess.Warnings)
		})
	}
}

// issue 7: unknown and invalid session ids. The store says "not found" with
// the id; the model-call activity (which needs the conversation) fails with
// that error, and an id that cannot name a file is a non-retryable bad
// input before any file is touched.
func TestSession_UnknownAndInvalidIDs(t *testing.T) {
	dir := t.TempDir()
	st, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("load an unknown session", func(t *testing.T) {
		_, err := st.Load("nosuch")
		if !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), `"nosuch"`) {
			t.Fatalf("Load: %v; want ErrNotFound naming the id", err)
		}
	})
	acts := &activities.Activities{Sessions: st, Provider: func(string) (llm.Provider, error) {
		return scripted.New(scripted.Options{}), nil
	}}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(acts.CallModel, activity.RegisterOptions{Name: activities.CallModelName})
	env.RegisterActivityWithOptions(acts.AppendEntries, activity.RegisterOptions{Name: activities.AppendEntriesName})
	cases := []struct {
		name, activity string
		in             any
		errType        string
		nonRetryable   bool
		want           string
	}{
		{"model call in an unknown session", activities.CallModelName,
			activities.CallModelInput{SessionID: "nosuch", LeafID: "u", EntryID: "a", Model: activities.ModelRef{Provider: "scripted"}},
			activities.ErrTypeSessionStore, false, `load session "nosuch": session not found`},
		{"model call with an id escaping the directory", activities.CallModelName,
			activities.CallModelInput{SessionID: "../../etc/passwd", Model: activities.ModelRef{Provider: "scripted"}},
			activities.ErrTypeBadInput, true, "invalid session id"},
		{"append with an empty id", activities.AppendEntriesName,
			activities.AppendEntriesInput{SessionID: ""},
			activities.ErrTypeBadInput, true, "invalid session id: empty"},
		{"append with a 300-character id", activities.AppendEntriesName,
			activities.AppendEntriesInput{SessionID: strings.Repeat("x", 300)},
			activities.ErrTypeBadInput, true, "300 characters, at most 128"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := env.ExecuteActivity(tc.activity, tc.in)
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) || appErr.Type() != tc.errType || appErr.NonRetryable() != tc.nonRetryable ||
				!strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want %s (non-retryable %t) naming %q", err, tc.errType, tc.nonRetryable, tc.want)
			}
			t.Logf("error: %v", err)
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("bad ids created files: %v", entries)
	}
}
