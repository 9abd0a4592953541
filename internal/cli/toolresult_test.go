package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// storeResult writes a tool result entry to the JSONL store under home,
// as the worker does, and returns the printer option that reads it (as
// the workers' ReadSession does; the starter reads through them).
func storeResult(t *testing.T, home, sessionID, entryID, tool, text string, isError bool) func(entryID string) (string, bool) {
	t.Helper()
	st, err := session.Open(filepath.Join(home, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Init(sessionID, session.Header{Cwd: home}); err != nil {
		t.Fatal(err)
	}
	m := agent.Message{Role: agent.RoleToolResult, ToolCallID: "c-" + entryID, ToolName: tool, IsError: isError,
		Content: []agent.ContentBlock{{Type: agent.BlockText, Text: text}}}
	if _, err := st.Append(sessionID, session.Entry{Type: session.TypeMessage, ID: entryID, Timestamp: time.Now(), Message: &m}); err != nil {
		t.Fatal(err)
	}
	return func(entryID string) (string, bool) {
		sess, err := st.Load(sessionID)
		if err != nil {
			return "", false
		}
		en, ok := sess.Get(entryID)
		return en.Message.Text(), ok
	}
}

// toolEnd is the tool_execution_end the workflow emits: a preview of
// 160 characters, marked truncated when the result is longer.
func toolEnd(entryID, tool, text string, isError bool) agent.Event {
	preview, r := text, &agent.ToolResult{}
	if len(text) > 160 {
		preview = text[:160]
		r.Details = map[string]any{"truncated": true, "bytes": len(text), "entryId": entryID}
	}
	r.Content = []agent.ContentBlock{{Type: agent.BlockText, Text: preview}}
	return agent.Event{Type: agent.EventToolExecutionEnd, EntryID: entryID, ToolCallID: "c-" + entryID, ToolName: tool, ToolResult: r, IsError: isError}
}

func goTestOutput() string {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "=== RUN   TestGreeting/case_%02d\n", i)
	}
	b.WriteString("--- FAIL: TestGreeting (0.00s)\n    greet_test.go:12: got \"Helo\", want \"Hello\"\nFAIL\nFAIL\texample.com/greet\t0.004s\n\nCommand exited with code 1")
	return b.String()
}

// Tool results print as terminal agents show them, read whole from the
// session store when the event's preview is cut: an edit's diff with its
// + lines, a failing command's last lines and exit code, an error message
// whole (issue 23: each was a 100-character prefix of a 160-character
// preview); the cut says how to see the rest, with the entry id (issue 39
// item 7).
func TestPrinter_ToolResultsAsTerminalAgentsShowThem(t *testing.T) {
	diff := "Successfully replaced text in greet.go.\n\n" +
		"  9 func Greet(name string) string {\n 10 \t// The greeting a caller prints for its user; kept short.\n" +
		"-11 \treturn \"Helo, \" + name + \"!\"\n+11 \treturn \"Hello, \" + name + \"!\"\n 12 }\n"
	interrupted := "Tool bash was interrupted (its worker stopped): the command may or may not have completed. Check its effects before running it again."
	for _, tc := range []struct {
		name, tool, text string
		isError          bool
		want, not        []string
	}{
		{"edit", "edit", diff, false,
			[]string{"  ✓ edit: Successfully replaced text in greet.go.", "    -11 \treturn \"Helo, \" + name + \"!\"", "    +11 \treturn \"Hello, \" + name + \"!\""}, nil},
		{"failing command", "bash", goTestOutput(), true,
			[]string{"  ✗ bash", "    … 34 earlier lines (all: --full, or starter show --session s1 e7)", "    --- FAIL: TestGreeting (0.00s)", "    FAIL\texample.com/greet\t0.004s", "    Command exited with code 1"},
			[]string{"case_01", "case_34\n"}},
		{"message", "bash", interrupted, true, []string{"  ✗ bash: " + interrupted}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			bodies := storeResult(t, home, "s1", "e7", tc.tool, tc.text, tc.isError)
			var out bytes.Buffer
			p := newPrinter(&out, false, "s1")
			p.body = bodies
			p.print(toolEnd("e7", tc.tool, tc.text, tc.isError))
			got := out.String()
			lines := strings.Split(got, "\n")
			at := 0
			for _, w := range tc.want {
				for at < len(lines) && lines[at] != w {
					at++
				}
				if at == len(lines) {
					t.Fatalf("output lacks line %q (in order):\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Fatalf("collapsed output shows %q:\n%s", n, got)
				}
			}
		})
	}
}

// When the store cannot be read (a cluster's worker keeps it elsewhere)
// the preview prints with the command that shows the whole result.
func TestPrinter_PreviewNamesShowWhenStoreUnreadable(t *testing.T) {
	var out bytes.Buffer
	p := newPrinter(&out, false, "s1")
	p.body = func(string) (string, bool) { return "", false }
	p.print(toolEnd("e7", "bash", goTestOutput(), true))
	if !strings.Contains(out.String(), "starter show --session s1 e7") || !strings.Contains(out.String(), "case_01") {
		t.Fatalf("output:\n%s", out.String())
	}
}

// --full prints every line of the result, as text or in the JSON event.
func TestPrinter_FullPrintsWholeResult(t *testing.T) {
	home := t.TempDir()
	bodies := storeResult(t, home, "s1", "e7", "bash", goTestOutput(), true)
	var out bytes.Buffer
	p := newPrinter(&out, false, "s1")
	p.body, p.full = bodies, true
	p.print(toolEnd("e7", "bash", goTestOutput(), true))
	for _, want := range []string{"case_01", "case_40", "Command exited with code 1"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("full output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	p = newPrinter(&out, true, "s1")
	p.body, p.full = bodies, true
	p.print(toolEnd("e7", "bash", goTestOutput(), true))
	if !strings.Contains(out.String(), "case_01") || !strings.Contains(out.String(), `FAIL\texample.com/greet`) || strings.Contains(out.String(), `"truncated"`) {
		t.Fatalf("--full --json event:\n%s", out.String())
	}
}

// `starter show` prints a tool result entry whole; a missing entry
// argument is one clear line (the reads through the workers, and their
// errors, are TestIntegration_FullResultsInPromptEventsAndShow's).
func TestShow_PrintsEntryWhole(t *testing.T) {
	m := agent.Message{Role: agent.RoleToolResult, ToolCallID: "c-e7", ToolName: "bash", IsError: true,
		Content: []agent.ContentBlock{{Type: agent.BlockText, Text: goTestOutput()}}}
	var out bytes.Buffer
	printEntry(&out, session.Entry{Type: session.TypeMessage, ID: "e7", Message: &m})
	if want := "✗ bash (c-e7)\n" + goTestOutput() + "\n"; out.String() != want {
		t.Fatalf("show printed\n%s\nwant\n%s", out.String(), want)
	}
	code, _, errOut := run(t, map[string]string{"DURABLE_AGENT_HOME": t.TempDir()}, "show", "--session", "s1")
	if code != ExitUsage || !strings.Contains(errOut, "want exactly one argument: the entry id") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
