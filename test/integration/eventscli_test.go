package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/workflows"
)

// `starter events --session S --follow` on a prompt that then succeeds
// prints its events and the answer, also a short answer that streams in
// one piece (no live snapshot catches it), and so does `events` after the
// end, with and without --follow.
func TestIntegration_EventsFollowPrintsTheAnswer(t *testing.T) {
	e := newEnv(t)
	e.s.Scripted.StreamDelayMs = 0 // the answer at once: no message_update
	e.startWorker()
	const answer = "Short answer: 42."
	in := client.PromptInput(e.s, "follow-answer", "what is the answer?")
	in.Model.Faults = []string{e503, "text:" + answer}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}

	code, out, stderr := e.starter("events", "--session", "follow-answer", "--follow")
	if code != cli.ExitOK {
		t.Fatalf("events --follow: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	if !strings.Contains(out, "Retry succeeded on attempt 1") || strings.Count(out, answer+"\n") != 1 {
		t.Fatalf("events --follow did not print the retry and the answer once:\n%s", out)
	}
	if _, err := e.result(run); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{
		{"events", "--session", "follow-answer", "--follow"},
		{"events", "--session", "follow-answer"},
	} {
		code, out, stderr := e.starter(args...)
		if code != cli.ExitOK || strings.Count(out, answer+"\n") != 1 {
			t.Fatalf("%v after the end: exit %d, answer not printed once\nstdout %s\nstderr %s", args, code, out, stderr)
		}
	}
}

// The events query past the end answers [] (JSON), not null; it takes a
// bare number or {"afterSeq": N}; a malformed argument is a one-line error
// naming both accepted forms. The starter's --after agrees.
func TestIntegration_EventsQueryArguments(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	run := e.prompt("query-args")
	if _, err := e.result(run); err != nil {
		t.Fatal(err)
	}
	evs := e.events("query-args")
	last := evs[len(evs)-1].Seq
	if evs[len(evs)-1].Type != agent.EventPromptEnd || last < 3 {
		t.Fatalf("events %s", typesOf(evs))
	}

	query := func(arg any) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		v, err := e.c.QueryWorkflow(ctx, workflows.WorkflowID("query-args"), "", agent.QueryEvents, arg)
		if err != nil {
			return "", err
		}
		var raw json.RawMessage
		if err := v.Get(&raw); err != nil {
			return "", err
		}
		return string(raw), nil
	}
	seqs := func(raw string) []int64 {
		var got []agent.Event
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatalf("decode %s: %v", raw, err)
		}
		var out []int64
		for _, ev := range got {
			out = append(out, ev.Seq)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		arg  any
		want []int64
	}{
		{"bare number", last - 2, []int64{last - 1, last}},
		{"afterSeq object", map[string]int64{"afterSeq": last - 1}, []int64{last}},
		{"afterSeq as typed in the temporal CLI", json.RawMessage(fmt.Sprintf(`{"afterSeq": %d}`, last-1)), []int64{last}},
	} {
		raw, err := query(tc.arg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := seqs(raw); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Fatalf("%s: seqs %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, arg := range []any{last, last + 100, map[string]int64{"afterSeq": last}} {
		if raw, err := query(arg); err != nil || raw != "[]" {
			t.Fatalf("events after %v (the end is %d) = %s, %v; want []", arg, last, raw, err)
		}
	}
	for _, arg := range []any{"ten", map[string]string{"afterSeq": "x"}, map[string]int64{"after": 1}} {
		_, err := query(arg)
		if err == nil || !strings.Contains(err.Error(), `want a sequence number or {"afterSeq": N}`) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("malformed argument %v: %v; want a one-line error naming both forms", arg, err)
		}
	}

	code, out, stderr := e.starter("events", "--session", "query-args", "--after", fmt.Sprint(last), "--json")
	if code != cli.ExitOK || out != "" {
		t.Fatalf("events --after the end: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	code, out, _ = e.starter("events", "--session", "query-args", "--after", fmt.Sprint(last-1), "--json")
	if code != cli.ExitOK || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"type":"prompt_end"`) {
		t.Fatalf("events --after %d: exit %d\n%s", last-1, code, out)
	}
}
