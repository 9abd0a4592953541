package workflows

import (
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
)

// eventLog is the queryable event log of a session's workflow (Prompt,
// Compact, Bash): emit numbers and appends, the events query pages it.
// Events are workflow state, not commands: their shape can change without
// a workflow.GetVersion.
type eventLog struct {
	events []agent.Event
	// sizes[i] is the JSON size of events[i] (the events query's pages
	// are cut by it).
	sizes []int
	seq   int64
	// firstSeq is the seq of the last event of the runs before this one
	// (0 on a prompt's first run): events[i].Seq == firstSeq+i+1.
	firstSeq int64
}

// emit appends an event, bounded (agent.BoundEventSized): a message too big
// for an events page is kept as a preview that names its session entry.
func (l *eventLog) emit(ctx workflow.Context, e agent.Event) {
	l.seq++
	e.Seq = l.seq
	e.Time = workflow.Now(ctx).UTC()
	// JSON encoding is deterministic (struct fields in order, map keys
	// sorted); workflowcheck cannot tell through its reflection.
	e, size := agent.BoundEventSized(e) //workflowcheck:ignore
	l.events = append(l.events, e)
	l.sizes = append(l.sizes, size)
}

// eventsAfter returns a copy of the events with Seq > after, one page: as
// many as fit in agent.EventsPageBytes of JSON, at least one. The reader
// asks again after the last seq it got (the cursor) until a page is empty
// or not full (agent.PageMayContinue). A run that continues a prompt holds
// the events from firstSeq+1 on; the earlier ones are on the previous
// runs.
func (l *eventLog) eventsAfter(after int64) []agent.Event {
	i := max(after-l.firstSeq, 0)
	if i >= int64(len(l.events)) {
		return []agent.Event{}
	}
	end, size := int(i), 1 // "[" and "]"; a comma before each but the first
	for end < len(l.events) {
		next := size + l.sizes[end] + 1
		if end > int(i) && next > agent.EventsPageBytes {
			break
		}
		size = next
		end++
	}
	return append([]agent.Event(nil), l.events[i:end]...)
}

// serveQueries installs the state query (answered by state) and the
// events query.
func (l *eventLog) serveQueries(ctx workflow.Context, state func() agent.State) error {
	if err := workflow.SetQueryHandlerWithOptions(ctx, agent.QueryState,
		func() (agent.State, error) { return state(), nil },
		workflow.QueryHandlerOptions{Description: "session state: autoRetryEnabled, isRetrying, retryAttempt, isStreaming, isCompacting, messageCount, model, pendingMessageCount, pendingApprovals"},
	); err != nil {
		return err
	}
	return workflow.SetQueryHandlerWithOptions(ctx, agent.QueryEvents,
		func(arg eventsArg) ([]agent.Event, error) { return l.eventsAfter(arg.AfterSeq), nil },
		workflow.QueryHandlerOptions{Description: `events after a sequence number: 5 or {"afterSeq": 5} (default 0: all), each with seq and time`},
	)
}

// eventsArg is the argument of the events query: a bare number (as the
// starter sends it) or {"afterSeq": n} (as people type it in the
// temporal CLI); nothing means 0.
type eventsArg struct{ AfterSeq int64 }

// UnmarshalJSON accepts both forms.
func (a *eventsArg) UnmarshalJSON(b []byte) error {
	if json.Unmarshal(b, &a.AfterSeq) == nil { // a number (anything else leaves AfterSeq as it was)
		return nil
	}
	var obj struct {
		AfterSeq *int64 `json:"afterSeq"`
	}
	if err := json.Unmarshal(b, &obj); err != nil || obj.AfterSeq == nil {
		return fmt.Errorf(`events query: want a sequence number or {"afterSeq": N}, got %s`, line.Cut(string(b), 80))
	}
	a.AfterSeq = *obj.AfterSeq
	return nil
}

// lastEvents is the last page of the run's events (see eventsAfter): a
// finished prompt's result carries it, so a follower reads them without a
// worker.
func (l *eventLog) lastEvents() []agent.Event {
	i, size := len(l.events), 1
	for i > 0 && size+l.sizes[i-1]+1 <= agent.EventsPageBytes {
		i--
		size += l.sizes[i] + 1
	}
	return append([]agent.Event(nil), l.events[i:]...)
}
