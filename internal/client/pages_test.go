package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/retry"
	"github.com/durableagent/durableagent/workflows"
)

// pageBytes is the events query's page bound as the workflow applies it
// (agent.EventsPageBytes).
const pageBytes = 384 << 10

// pagingTemporal answers the events query as the workflow does: the
// events after the argument that fit in pageBytes of JSON, at least one.
type pagingTemporal struct{ *fakeTemporal }

func (p pagingTemporal) QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error) {
	v, err := p.fakeTemporal.QueryWorkflow(ctx, workflowID, runID, queryType, args...)
	if err != nil {
		return nil, err
	}
	var all []agent.Event
	if err := v.Get(&all); err != nil {
		return nil, err
	}
	page, size := []agent.Event{}, 1
	for _, e := range all {
		b, _ := json.Marshal(e)
		if len(page) > 0 && size+len(b)+1 > pageBytes {
			break
		}
		size += len(b) + 1
		page = append(page, e)
	}
	b, _ := json.Marshal(page)
	return encoded{b}, nil
}

// bigEvents is a completed prompt's events, seq 1..n, each a user
// message_end of about 60 KiB of JSON: 7 of them fill a page.
func bigEvents(n int64) []agent.Event {
	out := evs(1, n, agent.EventPromptEnd)
	for i := range out[:n-1] {
		m := agent.TextMessage(agent.RoleUser, fmt.Sprintf("message %d ", i)+strings.Repeat("words of a long message ", 2500))
		out[i].Type, out[i].EntryID, out[i].Message = agent.EventMessageEnd, fmt.Sprintf("e-%03d", i), &m
	}
	return out
}

// Issue 20 item 8: Events (starter events) reads every page of the
// events query, not only the first: the pages together are the prompt's
// events, in order, up to prompt_end.
// Spec 10.4.
func TestEvents_ReadsEveryPageOfTheEventsQuery(t *testing.T) {
	f := newFake(&fakeRun{id: "r1", events: bigEvents(20)})
	k := fastController(f)
	k.Client = pagingTemporal{f}
	got, err := k.Events(context.Background(), "s", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 20 || got[19].Type != agent.EventPromptEnd {
		t.Fatalf("Events read %d events (seqs %v); want the 20 of the prompt, in %d queries", len(got), seqs(got), f.queries)
	}
	for i, e := range got {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
}

// Issue 20 item 8: a follower reads the next page at once after one the
// page bound cut, not a poll interval later, and an `events --follow
// --after N` past the end of a prompt whose events fill several pages
// finds its prompt_end in its result.
// Spec 10.4.
func TestFollow_ReadsPagesAtOnceAndFindsPromptEndPastThem(t *testing.T) {
	f := newFake(&fakeRun{id: "r1", events: bigEvents(20)})
	k := fastController(f)
	k.Client = pagingTemporal{f}
	// Poll and status intervals of an hour: a follower that waited one
	// between pages would not end within follow's 10 s bound. No wall-clock
	// threshold, so a loaded machine cannot fail it.
	k.poll, k.status = time.Hour, time.Hour
	var r recorder
	end, err := follow(t, k, "", 0, &r)
	if err != nil || end.Type != agent.EventPromptEnd {
		t.Fatalf("follow: %+v %v (a poll interval waited between pages?)", end, err)
	}
	r.checkSeqs(t, 0, 20)

	k.poll, k.status = 5*time.Millisecond, 30*time.Millisecond
	f.do(func() { f.runs["r1"].status = enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED })
	var past recorder
	end, err = follow(t, k, "", 25, &past)
	if err != nil || end.Type != agent.EventPromptEnd || end.Seq != 20 {
		t.Fatalf("follow after the end: %+v %v; want the prompt_end (seq 20)", end, err)
	}
}

// Issue 20 item 8: a prompt, steer or follow-up message too big for one
// Temporal payload is refused in one line naming the sizes, before
// anything is started or sent (the controller's client is never called).
// Spec 10.4.
func TestMessageTooLarge_RefusedBeforeTemporal(t *testing.T) {
	k := &Controller{} // no client: a call to Temporal would panic
	big := strings.Repeat("x", 2_100_000)
	in := workflows.PromptInput{SessionID: "s", Message: big, Model: activities.ModelRef{Provider: "scripted", Name: "scripted-1"},
		Retry: retry.DefaultSettings()}
	for name, call := range map[string]func() error{
		"prompt":    func() error { _, err := k.StartPrompt(context.Background(), in); return err },
		"steer":     func() error { return k.Steer(context.Background(), "s", big) },
		"follow_up": func() error { return k.FollowUp(context.Background(), "s", big) },
	} {
		err := call()
		if !errors.Is(err, ErrMessageTooLarge) || strings.Contains(err.Error(), "\n") ||
			!strings.HasPrefix(err.Error(), name+" message too large: 2100000 bytes") {
			t.Fatalf("%s of 2.1 MB: %v; want one line saying it is too large", name, err)
		}
	}
}
