package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/workflows"
)

// Follow defaults.
const (
	// pollInterval is how often Follow queries the events, and reads the
	// running calls' heartbeat details while no push stream brings their
	// output (the fallback: a fixed interval, docs/live.md).
	pollInterval = 100 * time.Millisecond
	// statusInterval is how often Follow checks the workflow status while
	// nothing runs and nothing new happens, or a push stream is open.
	statusInterval = time.Second
	// DefaultUnreachableTimeout is how long Follow survives Temporal not
	// answering at all (Session.Follow: DefaultFollowGiveUp). A missing
	// worker is waited for as long as ctx lasts: the prompt is durable.
	DefaultUnreachableTimeout = 30 * time.Second
	// DefaultQueryTimeout bounds one events query.
	DefaultQueryTimeout = 5 * time.Second
)

const (
	maxQueryTimeout  = 15 * time.Second
	describeTimeout  = 5 * time.Second
	maxFollowBackoff = 2 * time.Second
	// resultTimeout bounds the read of a finished run's result.
	resultTimeout = 5 * time.Second
	// waitReportDelay: a failing query is reported through OnWait when the
	// failure lasts this long (a brand-new run may not answer for a moment).
	waitReportDelay = time.Second
)

// ErrPromptClosed: the prompt's workflow closed without a prompt_end event
// (terminated, timed out, failed, cancelled, or completed without one).
// Every *PromptClosedError matches it.
var ErrPromptClosed = errors.New("prompt closed")

// ErrTemporalUnreachable: Temporal did not answer: a dial that failed
// (Dial), or no answer for longer than DefaultUnreachableTimeout while
// following.
var ErrTemporalUnreachable = errors.New("cannot reach Temporal")

// PromptClosedError says a followed prompt's workflow closed without a
// prompt_end event (Status: terminated, timed out, ...). It matches
// ErrPromptClosed.
type PromptClosedError struct {
	SessionID  string
	WorkflowID string
	RunID      string
	Status     enumspb.WorkflowExecutionStatus
}

func (e *PromptClosedError) Error() string {
	phrase := cmp.Or(closedPhrases[e.Status], "closed ("+StatusName(e.Status)+")")
	return fmt.Sprintf("prompt in session %s %s (workflow %s run %s)", e.SessionID, phrase, e.WorkflowID, e.RunID)
}

// Is matches ErrPromptClosed.
func (e *PromptClosedError) Is(target error) bool { return target == ErrPromptClosed }

// closedPhrases say how a prompt closed, by status.
var closedPhrases = map[enumspb.WorkflowExecutionStatus]string{
	enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED: "was terminated",
	enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:  "timed out",
	enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:     "failed without a prompt_end event",
	enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:   "was cancelled",
	enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:  "completed without a prompt_end event",
}

// Follow calls fn with every event of a prompt after seq `after`, in order
// and once each, until the prompt_end event (returned) or ctx ends.
//
// runID "" follows the session's current run. Follow pins that run and,
// when it continues as new, moves on to the next run once every event of
// the old one was delivered; when the events after `after` are in an
// earlier run (a late attach to a continued prompt), it starts there.
//
// Between workflow events, fn also gets live events (live.IsLive: the
// output of running calls), which carry the seq of the last workflow event
// delivered before them. The Follow calls of one Controller that follow the same
// run share one reader (share.go) and its events: fn reads an event, it
// never changes it. docs/live.md says how live output travels and what a
// finished prompt's result does not hold.
//
// A workflow that closes without prompt_end (terminated, timed out, ...)
// ends Follow with a *PromptClosedError. An ended prompt whose prompt_end
// is at or before `after` returns that prompt_end at once (fn is not
// called). While no worker answers the events query Follow waits, telling
// OnWait; it fails only when Temporal itself stays unreachable for
// DefaultUnreachableTimeout, or ctx ends.
func (k *Controller) Follow(ctx context.Context, sessionID, runID string, after int64, fn func(agent.Event)) (agent.Event, error) {
	return k.follow(ctx, sessionID, runID, after, 0, fn)
}

// follow is Follow surviving Temporal not answering for unreachable (0:
// DefaultUnreachableTimeout).
func (k *Controller) follow(ctx context.Context, sessionID, runID string, after int64, unreachable time.Duration, fn func(agent.Event)) (agent.Event, error) {
	key := shareKey{k: k, wfID: workflows.WorkflowID(sessionID), runID: runID}
	r, sub := subscribe(ctx, key, after, func(out *reader) *follower {
		dc := k.dataConverter()
		return &follower{
			k: k, session: sessionID, wfID: key.wfID, runID: runID,
			after: after, out: out, live: live.NewCursor(),
			poll: cmp.Or(k.poll, pollInterval), status: cmp.Or(k.status, statusInterval),
			unreachable:  cmp.Or(unreachable, DefaultUnreachableTimeout),
			queryTimeout: cmp.Or(k.QueryTimeout, DefaultQueryTimeout),
			dc:           dc, push: newPushReader(out, dc),
		}
	})
	d := &delivery{cur: live.NewCursor(), after: after, fn: fn}
	return d.consume(ctx, r, sub)
}

// follower is the loop of one reader (share.go): the RPCs of one client
// following a prompt.
type follower struct {
	k             *Controller
	session, wfID string
	runID         string
	after         int64
	out           *reader
	// live is the reader's own cursor, fed every event and snapshot it
	// passes on: it tells which snapshots are of entries not seen yet.
	live             *live.Cursor
	dc               converter.DataConverter
	poll, status     time.Duration
	unreachable      time.Duration
	queryTimeout     time.Duration
	curQueryTimeout  time.Duration
	lastDescribe     time.Time
	lastQuery        time.Time
	fast             bool        // describe every poll: something runs or events arrive
	push             *pushReader // the running calls' push streams (push.go)
	undecodable      bool        // told OnWait that live output cannot be decoded
	walkedBack       map[string]bool
	failingSince     time.Time // the events query fails since
	unreachableSince time.Time // Describe fails since
	reported         string    // the wait message given to OnWait, "" when none
	backoff          time.Duration
	// res is the result of the finished run resRun (nil: none read yet).
	res    *workflows.PromptResult
	resRun string
	// describedLen is the run's history length the last Describe saw (0:
	// none of this run yet); queriedLen is describedLen when the last
	// events query that answered was made. See nothingNew.
	describedLen, queriedLen int64
}

type describeResult struct {
	status  enumspb.WorkflowExecutionStatus
	pending []live.Stamped
	// unseen: a snapshot is of an entry the live stream has no event of
	// yet (its live events must follow an events query, so that they come
	// after the entry's message_start).
	unseen bool
}

func (f *follower) run(ctx context.Context) (agent.Event, error) {
	var d *describeResult
	for {
		// Taken before the query, like a Describe's: a call that pushed
		// was scheduled by a workflow task the query sees.
		pushed, ended := f.push.take()
		if ended { // a call ended: its events, and the next call, now
			f.lastQuery, f.lastDescribe = time.Time{}, time.Time{}
		}
		// Describe before the query: an activity pending at the Describe
		// was scheduled by a workflow task the query sees, so live events
		// never precede their message_start; a message_end the query
		// returns silences the Describe's stale snapshot of the entry.
		// Between two polls a Describe alone may pass on the live output
		// of entries already streaming (see nextDescribe). While something
		// runs and the query is due, a Describe first says whether the
		// history grew since the last one (nothingNew); idle, the query
		// keeps its pace and the Describe its status interval.
		var derr error
		describeDue := !time.Now().Before(f.nextDescribe())
		growthDue := f.fast && f.queryDue() && f.canSkipQueries() && !f.lastDescribe.After(f.lastQuery)
		if d == nil && (describeDue || growthDue) {
			d, derr = f.describe(ctx)
		}
		var evs []agent.Event
		var qerr error
		var qe *queryError
		due := f.queryDue()
		if due && f.nothingNew() {
			due = false
			f.lastQuery = time.Now()
		}
		queried := due || derr != nil ||
			(d != nil && (d.unseen || d.status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING))
		if f.runID == "" { // no run to read: the Describe that pins it failed
			queried, qerr = false, derr
		}
		if queried {
			f.lastQuery = time.Now()
			if d != nil && finished(d.status) {
				// Its last page (PromptResult.LastEvents); earlier events
				// are not read (deliver goes on past the gap), nor any of
				// a run closed without a result: docs/live.md.
				if res := f.result(ctx); res != nil {
					evs = eventsAfter(res.LastEvents, f.after)
				}
			} else {
				evs, qerr = f.queryEvents(ctx, f.runID, f.after)
			}
			if qerr == nil {
				f.queriedLen = f.describedLen
			}
		}
		if ctx.Err() != nil {
			return agent.Event{}, ctx.Err()
		}
		progressed := false
		if qerr == nil {
			f.queryOK()
			end, done, moved := f.deliver(ctx, evs)
			if done {
				return end, nil
			}
			if moved { // to an earlier run: start over there
				d = nil
				f.restart()
				continue
			}
			if agent.PageMayContinue(evs) {
				// Cut at the page bound (agent.EventsPageBytes): the next
				// page at once, before a closed run is taken as read.
				f.lastQuery = time.Time{}
				continue
			}
			progressed = len(evs) > 0
		} else if errors.As(qerr, &qe) && qe.permanent {
			return agent.Event{}, qerr
		}

		if d != nil && d.status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			end, next, err := f.closed(ctx, d, qerr)
			if next != "" {
				f.runID, d = next, nil
				f.restart()
				continue
			}
			if err != nil || end.Type != "" {
				return end, err
			}
			// closed, events not readable yet: wait like an outage
		} else if qerr == nil {
			if d != nil {
				f.emitLive(d, queried)
			}
			f.emitPushed(pushed, queried)
		}

		if qerr != nil {
			// A failing Describe matters only when the query fails too
			// (a client may answer queries and not Describe).
			if d == nil { // classify the failure: is Temporal there at all?
				if derr == nil {
					d, derr = f.describe(ctx)
				}
				if derr != nil {
					if e, stop := f.describeFailed(ctx, derr); stop {
						return agent.Event{}, e
					}
				} else if d.status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
					continue // closed: handled at the top with the same result
				}
			}
			if d != nil {
				f.queryFailing(qerr)
			}
			f.backoff = min(max(2*f.backoff, f.poll), maxFollowBackoff) // the poll, doubling
			if !sleep(ctx, f.backoff, nil) {
				return agent.Event{}, ctx.Err()
			}
			d = nil
			continue
		}
		if progressed {
			f.fast = true
		}
		d = nil
		if !sleep(ctx, f.untilNext(), f.push.wake) { // a push stream brought something
			return agent.Event{}, ctx.Err()
		}
	}
}

// restart makes the next round read the run afresh (another run, or the
// same from an earlier seq).
func (f *follower) restart() {
	f.lastDescribe, f.lastQuery = time.Time{}, time.Time{}
	f.describedLen, f.queriedLen = 0, 0
}

// result is the result of the closed run runID of workflowID: nil when
// the run closed without one (terminated, timed out) or it cannot be
// read. Reading a closed run's result needs no worker.
func (k *Controller) result(ctx context.Context, workflowID, runID string) *workflows.PromptResult {
	cctx, cancel := context.WithTimeout(ctx, resultTimeout)
	defer cancel()
	res, _ := Result(cctx, k.Client.GetWorkflow(cctx, workflowID, runID))
	if res.Status == "" && res.LastEvents == nil {
		return nil // no result: no events to read
	}
	return &res
}

// eventsAfter is the events of evs (in seq order) after seq after.
func eventsAfter(evs []agent.Event, after int64) []agent.Event {
	for len(evs) > 0 && evs[0].Seq <= after {
		evs = evs[1:]
	}
	return evs
}

// result is the result of the finished run f.runID (Controller.result),
// read once when there is one.
func (f *follower) result(ctx context.Context) *workflows.PromptResult {
	if f.res == nil || f.resRun != f.runID {
		f.res, f.resRun = f.k.result(ctx, f.wfID, f.runID), f.runID
	}
	return f.res
}

// finished says a run with status s is a finished prompt: it closed
// other than by continuing as new, so no worker runs it any more. Its
// events are read from its result alone, never with the events query,
// which a closed workflow answers only through a worker (the follower
// stall of bench/RESULTS.md).
func finished(s enumspb.WorkflowExecutionStatus) bool {
	return s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && s != enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW
}

// untilNext is the wait until the next query or Describe is due, at least
// a millisecond. Polls keep their rate whatever the RPCs took.
func (f *follower) untilNext() time.Duration {
	next := f.lastQuery.Add(f.queryInterval())
	if t := f.nextDescribe(); t.Before(next) {
		next = t
	}
	return max(time.Until(next), time.Millisecond)
}

// queryDue: the events are queried every poll interval.
func (f *follower) queryDue() bool {
	return !time.Now().Before(f.lastQuery.Add(f.queryInterval()))
}

// nothingNew: a Describe made since the last events query saw the run's
// history as long as it was when that query was made, so the query due
// now would bring no new event (only a workflow task changes the events,
// and each adds to the history). The query is the dearest read
// (docs/live.md, the push path, 3); a forced one (the first, a page that
// continues, a call that ended, an entry not seen yet, a closed run) is
// never skipped.
func (f *follower) nothingNew() bool {
	return f.canSkipQueries() && f.describedLen == f.queriedLen && f.lastDescribe.After(f.lastQuery)
}

// canSkipQueries: the last events query answered and is not to be
// repeated at once, and the server reports history lengths.
func (f *follower) canSkipQueries() bool {
	return !f.lastQuery.IsZero() && f.queriedLen > 0
}

// deliver passes the events after f.after to fn in order. done: prompt_end
// was delivered. moved: the events after f.after are in an earlier run,
// which is now f.runID.
func (f *follower) deliver(ctx context.Context, evs []agent.Event) (end agent.Event, done, moved bool) {
	for _, e := range evs {
		if e.Seq <= f.after {
			continue
		}
		if e.Seq != f.after+1 {
			if !f.walkedBack[f.runID] {
				if f.walkedBack == nil {
					f.walkedBack = map[string]bool{}
				}
				f.walkedBack[f.runID] = true
				if prev := f.linkedRun(ctx, false); prev != "" {
					f.runID = prev
					return agent.Event{}, false, true
				}
			}
			// No earlier run holds them: they are gone; go on from here
			// rather than wait forever.
			f.after = e.Seq - 1
		}
		f.after = e.Seq
		f.live.Observe(e)
		f.out.event(e)
		if e.Type == agent.EventPromptEnd {
			return e, true, false
		}
	}
	return agent.Event{}, false, false
}

// closed handles a closed run: qerr is the result of the events query made
// after the Describe that saw it closed (nil: every event of the run was
// delivered). next is the run to follow on (continued as new); otherwise
// end or err is the outcome, or both are zero when the run's events cannot
// be read yet.
func (f *follower) closed(ctx context.Context, d *describeResult, qerr error) (end agent.Event, next string, err error) {
	switch d.status {
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		if qerr == nil {
			next = f.linkedRun(ctx, true) // "": retried on the next poll
		}
		return agent.Event{}, next, nil
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		if qerr != nil {
			return agent.Event{}, "", nil
		}
		// Its prompt_end is at or before f.after (an `events --after N`
		// past the end): return it at once.
		if res := f.result(ctx); res != nil && len(res.LastEvents) > 0 && res.LastEvents[len(res.LastEvents)-1].Type == agent.EventPromptEnd {
			return res.LastEvents[len(res.LastEvents)-1], "", nil
		}
	}
	return agent.Event{}, "", &PromptClosedError{SessionID: f.session, WorkflowID: f.wfID, RunID: f.runID, Status: d.status}
}

// nextDescribe is when the next Describe is due: every status interval,
// and every poll while something runs or events arrive and no push stream
// is open (the heartbeat fallback).
func (f *follower) nextDescribe() time.Time {
	if f.fast && !f.push.streaming() {
		return f.lastDescribe.Add(f.poll)
	}
	return f.lastDescribe.Add(f.status)
}

func (f *follower) describe(ctx context.Context) (*describeResult, error) {
	f.lastDescribe = time.Now()
	resp, err := f.k.describe(ctx, f.wfID, f.runID)
	if err != nil {
		return nil, err
	}
	info := resp.GetWorkflowExecutionInfo()
	f.runID = cmp.Or(f.runID, info.GetExecution().GetRunId()) // "": the current run, pinned
	if info.GetExecution().GetRunId() == f.runID {
		f.describedLen = info.GetHistoryLength()
	}
	f.unreachableSince = time.Time{}
	return f.snapshots(ctx, resp), nil
}

// snapshots reads the live output of the run a Describe saw (resp): the
// stream snapshots in its pending activities' heartbeat details (an
// activity without one has none; details that are not a snapshot are
// another activity's), which name each call's push stream (push.go) and
// are the fallback when no stream can be read. Details that do not decode
// at all (another payload codec key, or none) are told to OnWait.
func (f *follower) snapshots(ctx context.Context, resp *workflowservice.DescribeWorkflowExecutionResponse) *describeResult {
	info := resp.GetWorkflowExecutionInfo()
	d := &describeResult{status: info.GetStatus()}
	for _, pa := range resp.GetPendingActivities() {
		details := pa.GetHeartbeatDetails()
		if len(details.GetPayloads()) == 0 {
			continue
		}
		var raw json.RawMessage
		if err := f.dc.FromPayloads(details, &raw); err != nil {
			f.cannotDecode(err)
			continue
		}
		var snap live.Snapshot
		if json.Unmarshal(raw, &snap) != nil || (snap.Kind != live.KindModel && snap.Kind != live.KindTool) {
			continue
		}
		s := live.Stamped{Snapshot: snap, Call: pa.GetActivityId(), At: time.Now()}
		if t := pa.GetLastHeartbeatTime(); t != nil {
			s.At = t.AsTime()
		}
		d.pending = append(d.pending, s)
	}
	if d.status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		f.push.observe(ctx, d.pending)
		f.push.newest(d.pending)
	}
	f.fast = len(resp.GetPendingActivities()) > 0
	for _, p := range d.pending {
		if !f.live.Known(p.Snapshot) {
			d.unseen = true
		}
	}
	sort.SliceStable(d.pending, func(i, j int) bool { return d.pending[i].At.Before(d.pending[j].At) })
	return d
}

// cannotDecode tells OnWait, once per Follow, that the live output cannot
// be read.
func (f *follower) cannotDecode(err error) {
	if f.undecodable {
		return
	}
	f.undecodable = true
	if f.k.OnWait != nil {
		f.k.OnWait(fmt.Sprintf("cannot decode the live output of session %s (%s): "+
			"it needs the worker's payload codec key (Controller.DataConverter); events still arrive, each message's text at its end",
			f.session, line.First(err.Error())))
	}
}

// describeFailed handles a failed Describe: stop says Follow ends with
// err.
func (f *follower) describeFailed(ctx context.Context, err error) (_ error, stop bool) {
	if ctx.Err() != nil {
		return ctx.Err(), true
	}
	if isNotFound(err) {
		return fmt.Errorf("%w in session %s (workflow %s)", ErrNoPrompt, f.session, f.wfID), true
	}
	if isPermanentRPC(err) {
		return fmt.Errorf("describe workflow %s: %s", f.wfID, rpcText(err)), true
	}
	if f.unreachableSince.IsZero() {
		f.unreachableSince = time.Now()
	}
	if time.Since(f.unreachableSince) >= f.unreachable {
		return fmt.Errorf("%w for %s while following session %s (workflow %s, after seq %d): %s",
			ErrTemporalUnreachable, f.unreachable.Round(time.Second), f.session, f.wfID, f.after, rpcText(err)), true
	}
	f.report(fmt.Sprintf("cannot reach Temporal for session %s (%s); retrying for up to %s",
		f.session, rpcText(err), f.unreachable.Round(time.Second)))
	return nil, false
}

// queryFailing: Temporal answers, the events query does not. Either no
// worker answers it, or a worker answered it with a failure (a transient
// one: see failedQuery); both are waited out, told to OnWait once when
// they last.
func (f *follower) queryFailing(qerr error) {
	if f.failingSince.IsZero() {
		f.failingSince = time.Now()
	}
	if time.Since(f.failingSince) < waitReportDelay && !isDeadline(qerr) {
		return
	}
	var q *queryError
	if errors.As(qerr, &q) && q.failed != "" {
		f.report(fmt.Sprintf("the events query of session %s failed on the worker (%s); retrying (the prompt is durable)", f.session, q.failed))
		return
	}
	f.report(fmt.Sprintf("no worker is answering for session %s; waiting (the prompt is durable)", f.session))
}

func (f *follower) queryOK() {
	f.failingSince = time.Time{}
	f.backoff = 0
	f.curQueryTimeout = 0
	if f.reported != "" {
		f.reported = ""
		if f.k.OnWait != nil {
			f.k.OnWait(fmt.Sprintf("following session %s again", f.session))
		}
	}
}

// report tells OnWait msg, once per outage (a change of cause is told).
func (f *follower) report(msg string) {
	if f.reported == msg {
		return
	}
	f.reported = msg
	if f.k.OnWait != nil {
		f.k.OnWait(msg)
	}
}

// sleep waits d, or less when wake (nil: never) fires; false when ctx
// ended.
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
	case <-wake:
	}
	return true
}

// queryEvents runs the events query of one run, bounded in time.
func (f *follower) queryEvents(ctx context.Context, runID string, after int64) ([]agent.Event, error) {
	timeout := cmp.Or(f.curQueryTimeout, f.queryTimeout)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := f.k.Client.QueryWorkflow(cctx, f.wfID, runID, agent.QueryEvents, after)
	if err != nil {
		if isNotFound(err) {
			return nil, &queryError{err: fmt.Errorf("%w in session %s (workflow %s run %s)", ErrNoPrompt, f.session, f.wfID, runID), permanent: true}
		}
		if isDeadline(err) && ctx.Err() == nil {
			f.curQueryTimeout = min(2*timeout, maxQueryTimeout)
		}
		qe := &queryError{err: fmt.Errorf("query events of session %s: %s", f.session, rpcText(err)), permanent: isPermanentRPC(err)}
		if failedQuery(err) {
			qe.failed = rpcText(err)
		}
		return nil, qe
	}
	var evs []agent.Event
	if err := v.Get(&evs); err != nil {
		return nil, &queryError{err: fmt.Errorf("decode events of session %s: %w", f.session, err), permanent: true}
	}
	return evs, nil
}

// queryError is a failed events query. permanent: another try will not
// fix it (Follow ends with it); failed: the worker's failure text when
// the query reached a worker and failed there.
type queryError struct {
	err       error
	permanent bool
	failed    string
}

func (e *queryError) Error() string { return e.err.Error() }
func (e *queryError) Unwrap() error { return e.err }

// isPermanentRPC: errors that another try will not fix (the workflow does
// not have this query at all, bad arguments, no access, no namespace). A
// query that failed on the worker otherwise is not one: the SDK fails a
// query it answers from workflow state it is rebuilding while the history
// grows (after a worker restart: "[TMPRL1100] invalid state transition:
// attempt to handleInitiatedEvent ... state=Created", temporalio/sdk-go
// issue 755), and the next query, on the rebuilt state, answers.
func isPermanentRPC(err error) bool {
	var ia *serviceerror.InvalidArgument
	var pd *serviceerror.PermissionDenied
	var nn *serviceerror.NamespaceNotFound
	return unknownQuery(err) || errors.As(err, &ia) || errors.As(err, &pd) || errors.As(err, &nn)
}

// failedQuery: the query reached a worker and failed there.
func failedQuery(err error) bool {
	var qf *serviceerror.QueryFailed
	return errors.As(err, &qf)
}

// unknownQuery: the workflow has no handler of the query (the SDK's
// "unknown queryType events. KnownQueryTypes=[...]"): not a prompt
// workflow, or one too old to have it.
func unknownQuery(err error) bool {
	return failedQuery(err) && strings.Contains(err.Error(), "unknown queryType")
}

func isDeadline(err error) bool {
	var de *serviceerror.DeadlineExceeded
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &de) || status.Code(err) == codes.DeadlineExceeded
}

// rpcText is an RPC error for people: no bare "context deadline exceeded".
func rpcText(err error) string {
	if isDeadline(err) {
		return "no answer in time"
	}
	return line.First(err.Error())
}

// emitLive passes d's snapshots on; of entries no live event was made
// of yet only when the events were queried after the Describe (queried),
// so that they follow the entry's message_start.
func (f *follower) emitLive(d *describeResult, queried bool) {
	if len(d.pending) == 0 {
		return
	}
	for _, p := range d.pending {
		if queried || f.live.Known(p.Snapshot) {
			f.live.Diff(p.Snapshot)
		}
	}
	f.out.snapshots(d.pending, queried)
}

// linkedRun is the run f.runID continued as new into (next; "" if not
// known yet), or the run that continued as new into it (not next; "" if
// none): its close or its first history event says.
func (f *follower) linkedRun(ctx context.Context, next bool) string {
	cctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	filter := enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT
	if next {
		filter = enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT
	}
	it := f.k.Client.GetWorkflowHistory(cctx, f.wfID, f.runID, false, filter)
	if !it.HasNext() {
		return ""
	}
	ev, err := it.Next()
	switch a := ev.GetWorkflowExecutionStartedEventAttributes(); {
	case err != nil:
		return ""
	case next:
		return ev.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
	case a.GetInitiator() == enumspb.CONTINUE_AS_NEW_INITIATOR_WORKFLOW:
		return a.GetContinuedExecutionRunId()
	}
	return ""
}
