package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/workflows"
)

// replayTimeout bounds reading a closed run's history to replay it.
const replayTimeout = 30 * time.Second

// replayedEvents returns the events after f.after of a run d saw closed,
// read by replaying its history in this process (workflows.EventsOfClosedRun)
// instead of an events query, which a closed workflow answers only
// through a worker: a finished prompt's events need no worker however
// many there are (the result holds only the last page). ok is false when
// the run is running, or its history does not replay on this build's
// workflow code (written by a worker of another version): the events
// query asks a worker then.
func (f *follower) replayedEvents(ctx context.Context, d *describeResult) (_ []agent.Event, ok bool, err error) {
	if d == nil || d.status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil, false, nil
	}
	h := f.replay(ctx, f.runID)
	if h == nil {
		return nil, false, nil
	}
	evs, err := h(f.after)
	if err != nil {
		return nil, true, &queryError{err: fmt.Errorf("events of session %s: %w", f.session, err), failed: line.First(err.Error())}
	}
	return evs, true, nil
}

// replay is the events query of closed run runID answered from its
// replayed history, made once per run; nil when it cannot be.
func (f *follower) replay(ctx context.Context, runID string) func(after int64) ([]agent.Event, error) {
	if h, ok := f.replays[runID]; ok {
		return h
	}
	h, err := f.k.replayClosedRun(ctx, f.wfID, runID, f.dc)
	if errors.Is(err, errHistoryUnread) {
		return nil // not remembered: read again on the next poll
	}
	if f.replays == nil {
		f.replays = map[string]func(int64) ([]agent.Event, error){}
	}
	f.replays[runID] = h
	return h
}

// errHistoryUnread: the history could not be read (another try may).
var errHistoryUnread = errors.New("history not read")

// replayClosedRun is the events query of closed run runID of workflow
// wfID answered from its history replayed here (workflows.EventsOfClosedRun);
// an error when the history cannot be read (errHistoryUnread) or does not
// replay on this build. dc decodes the history (nil: the default).
func (k *Controller) replayClosedRun(ctx context.Context, wfID, runID string, dc converter.DataConverter) (func(after int64) ([]agent.Event, error), error) {
	cctx, cancel := context.WithTimeout(ctx, replayTimeout)
	defer cancel()
	hist := &historypb.History{}
	it := k.Client.GetWorkflowHistory(cctx, wfID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errHistoryUnread, err)
		}
		hist.Events = append(hist.Events, ev)
	}
	replayed, err := workflows.EventsOfClosedRun(hist, &commonpb.WorkflowExecution{WorkflowId: wfID, RunId: runID}, dc)
	if err != nil {
		return nil, err
	}
	// Through JSON, as a query's answer comes: the same events to the
	// byte (times in UTC, empty fields as the query leaves them).
	return func(after int64) ([]agent.Event, error) {
		evs, err := replayed(after)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(evs)
		if err != nil {
			return nil, fmt.Errorf("encode replayed events: %w", err)
		}
		var out []agent.Event
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, fmt.Errorf("decode replayed events: %w", err)
		}
		return out, nil
	}, nil
}

// eventsPage is a page of the events after `after` of run runID: from
// its replayed history when it was replayed (a closed run), else with
// the events query.
func (f *follower) eventsPage(ctx context.Context, runID string, after int64) ([]agent.Event, error) {
	if h := f.replays[runID]; h != nil {
		return h(after)
	}
	return f.queryEvents(ctx, runID, after)
}
