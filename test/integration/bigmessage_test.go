package integration

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/testserver"
)

// plainMessage is n bytes of letters, spaces and full stops, ending in a
// letter (the starter trims spaces): each byte is one byte of JSON, so
// the prompt's encoded input grows with n one for one.
func plainMessage(n int) string {
	const line = "Read every word of this long prompt and answer in one line. "
	return strings.Repeat(line, n/len(line)+1)[:n-1] + "x"
}

var tooLargeRE = regexp.MustCompile(`prompt message too large: (\d+) bytes, (\d+) as Temporal stores it, at most (\d+) `)

// Issue 20 item 8: `starter prompt` with a 1.9 MB message, and with the
// largest message it accepts, follows the prompt to its end and prints
// the answer, and `starter events` prints that prompt's events (JSON
// lines under the query limit, the user message a preview naming its
// session entry, which holds the whole message). One byte more than the
// largest is refused in one line before anything starts.
// Spec 10.4.
func TestIntegration_HugePromptMessageCompletesAndItsEventsPrint(t *testing.T) {
	e := newEnv(t)
	e.s.Scripted.StreamDelayMs = 0
	e.startWorker()
	const answer = "Read it all."
	check := func(session string, size int) {
		t.Helper()
		msg := plainMessage(size)
		// The answer prints at its message_end; the threshold compaction
		// this much context starts afterwards prints after it, and says
		// why it did nothing (the prompt and its answer are all recent).
		code, out, stderr := e.starter("prompt", "--session", session, "--fault", "text:"+answer, msg)
		if code != cli.ExitOK || !strings.HasPrefix(out, answer+"\n") || !strings.Contains(out, "\nAuto-compaction skipped: nothing to compact yet\n") {
			t.Fatalf("prompt of %d bytes: exit %d\nstdout %.300s\nstderr %.300s", size, code, out, stderr)
		}

		code, out, stderr = e.starter("events", "--session", session)
		if code != cli.ExitOK || !strings.Contains(out, "\n"+answer+"\n") {
			t.Fatalf("events of the %d-byte prompt: exit %d\nstdout %.300s\nstderr %.300s", size, code, out, stderr)
		}
		code, out, stderr = e.starter("events", "--session", session, "--json")
		if code != cli.ExitOK || len(out) > 512<<10 {
			t.Fatalf("events --json of the %d-byte prompt: exit %d, %d bytes\nstderr %.300s", size, code, len(out), stderr)
		}
		var users []agent.Event
		var last agent.Event
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var ev agent.Event
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("events --json line %.200q: %v", line, err)
			}
			if ev.Message != nil && ev.Message.Role == agent.RoleUser {
				users = append(users, ev)
			}
			last = ev
		}
		if last.Type != agent.EventPromptEnd || last.Status != agent.StatusCompleted || len(users) != 2 {
			t.Fatalf("events of the %d-byte prompt: last %s %s, %d user message events", size, last.Type, last.Status, len(users))
		}
		note := fmt.Sprintf(" more bytes: the whole message is session entry %s]", users[1].EntryID)
		if text := users[1].Message.Text(); !strings.HasSuffix(text, note) || !strings.HasPrefix(msg, text[:1000]) {
			t.Fatalf("user message_end of the %d-byte prompt: %d bytes, ends %q", size, len(text), text[max(0, len(text)-120):])
		}
		code, out, _ = e.starter("session", "export", "--session", session)
		if code != cli.ExitOK || !strings.Contains(out, `"id":"`+users[1].EntryID+`"`) || !strings.Contains(out, msg) {
			t.Fatalf("session %s does not hold the whole %d-byte message under entry %s (exit %d)", session, size, users[1].EntryID, code)
		}
	}

	check(testserver.Session("huge-1900k"), 1_900_000)

	// The refusal of a message past the limit says how big the prompt's
	// input is: the largest accepted message is that much smaller.
	session := testserver.Session("huge-max")
	over := plainMessage(2_060_000) // past the limit, with the same length prefixes as the largest
	code, out, stderr := e.starter("prompt", "--session", session, "--fault", "text:"+answer, over)
	m := tooLargeRE.FindStringSubmatch(stderr)
	if code != cli.ExitUsage || m == nil || strings.Count(stderr, "\n") != 1 || out != "" {
		t.Fatalf("a 2.06 MB message: exit %d, stdout %q, stderr %q; want exit 2 and one line saying it is too large", code, out, stderr)
	}
	msgBytes, _ := strconv.Atoi(m[1])
	size, _ := strconv.Atoi(m[2])
	limit, _ := strconv.Atoi(m[3])
	largest := msgBytes - (size - limit)
	if msgBytes != len(over) || largest < 1_950_000 {
		t.Fatalf("refusal %q: the largest message would be %d bytes", m[0], largest)
	}
	if _, _, err := e.k.RunStatus(t.Context(), session, ""); err == nil {
		t.Fatal("the refused prompt started a workflow")
	}

	t.Logf("largest accepted message: %d bytes (the prompt's input %d bytes as Temporal stores it)", largest, limit)
	check(session, largest)

	code, out, stderr = e.starter("prompt", "--session", session, "--fault", "text:"+answer, plainMessage(largest+1))
	if code != cli.ExitUsage || !tooLargeRE.MatchString(stderr) || strings.Count(stderr, "\n") != 1 || out != "" {
		t.Fatalf("one byte more than the largest (%d): exit %d, stdout %q, stderr %q", largest+1, code, out, stderr)
	}
}
