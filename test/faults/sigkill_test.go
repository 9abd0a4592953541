package faults

import (
	"fmt"
	"strings"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/workflows"
)

const e503 = "503 Service Unavailable"

// The SIGKILL trials: each is a prompt whose scripted model fails twice
// with a 503 and then answers, with short backoffs (300 ms, 600 ms) and a
// model latency of 150 ms. A fault-free run first measures how long such
// a prompt takes on this machine (D); each trial then kills its worker at
// a seeded random fraction of D, so kills land in model calls, backoff
// waits, session writes and workflow tasks alike. The seed (FAULTS_SEED)
// fixes every fraction.
const (
	killTrials      = 20
	killParallel    = 5
	killBaseDelayMs = 300
	killLatencyMs   = 150
	killDefaultSeed = 7
	killTrialLimit  = 2 * time.Minute
)

// heartbeatLost is the error the workflow records for the call of a
// killed worker (workflows.ConnectionLostMessage for a heartbeat timeout).
var heartbeatLost = fmt.Sprintf(workflows.ConnectionLostMessage, "heartbeat")

// Durability under SIGKILL (issue 7): a worker process is killed at a
// seeded random moment of a prompt with retries; a new worker starts and
// every prompt completes, with no duplicate and no lost session entry.
//
// The event sequence is compared exactly (types, attempts, delays, error
// texts, willRetry, success) with the sequence this kill must produce:
//   - the kill did not land inside a model call: the fault-free sequence,
//     as a reference run without a kill produces it first: 503, retry 1,
//     503, retry 2, answer, auto_retry_end{success, 2};
//   - it landed inside model call k, that is between Temporal handing the
//     call to the worker and Temporal recording its result (the killed
//     worker's log of the calls it began and ended places the kill there,
//     and history shows that call, and only it, timed out): call k
//     becomes the connection error of a lost worker (heartbeat timeout).
//     The scripted model indexes its fault script by the calls recorded
//     in the session file, and the lost call is recorded, so the lost
//     call uses up its script slot: for k = 0 or 1 the sequence is the
//     fault-free one with that error text replaced; for k = 2 (the
//     answering call) one more retry follows: 503, 503, connection
//     error, answer, auto_retry_end{success, 3}. If the call's activity
//     had already written its answer to the session when the worker died
//     (the kill fell between that write and Temporal recording the
//     result), the workflow keeps that record: the sequence is the
//     fault-free one.
//
// That is "the fault-free sequence" in the only sense that holds: nothing
// is lost, repeated or reordered, and a kill inside a model call costs
// exactly that one call, retried through the ordinary retry policy.
func TestFaults_WorkerSIGKILLAtRandomPointsOfARetryingPrompt(t *testing.T) {
	alongside(t)
	e := newEnv(t, sharedAddress(t))
	e.s.Retry.BaseDelayMs = killBaseDelayMs
	e.s.Retry.MaxRetries = 3
	e.s.Model.HeartbeatTimeoutMs = 1000
	p := &killPlan{name: "kill", seed: killDefaultSeed, envSeed: true, trials: killTrials, parallel: killParallel,
		latencyMs: killLatencyMs, limit: killTrialLimit, events: true,
		input: func(_ *testing.T, tr *trial) (workflows.PromptInput, error) {
			in := client.PromptInput(e.s, tr.session, "fix the failing test")
			in.Model.Faults = []string{e503, e503}
			return in, nil
		}}
	p.start(t)

	// The fault-free reference: its events are the sequence every trial
	// is compared with, and its duration spreads the kill moments.
	free := p.reference(t, e)
	if free.err != nil || free.resErr != nil || free.res.Status != agent.StatusCompleted {
		t.Fatalf("fault-free run: %v %+v %v", free.err, free.res, free.resErr)
	}
	freeOutcomes := []string{e503, e503, ""}
	checkEvents(t, free.events, expectedEvents(freeOutcomes, killBaseDelayMs, 3))
	checkSessionEntries(t, free)
	t.Logf("fault-free run took %v: %s", free.elapsed.Round(time.Millisecond), typesOf(free.events))

	trials := p.draw(free.elapsed)
	started := time.Now()
	p.runAll(t, e, trials)
	t.Logf("seed %d: %d trials in %v", p.seed, killTrials, time.Since(started).Round(time.Millisecond))

	inCall := 0
	checkEach(t, trials, func(t *testing.T, tr *trial) {
		if checkKillTrial(t, tr) {
			inCall++
		}
	})
	t.Logf("kills inside a model call: %d of %d", inCall, killTrials)
}

// modelCall is one CallModel activity as history recorded it.
type modelCall struct {
	entryID  string
	timedOut string // the timeout type, "" if the call completed
}

func modelCalls(t *testing.T, hist []*historypb.HistoryEvent) []modelCall {
	t.Helper()
	var calls []modelCall
	index := map[int64]int{}
	for _, ev := range hist {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == activities.CallModelName {
			var in activities.CallModelInput
			if err := converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &in); err != nil {
				t.Fatalf("decode CallModel input: %v", err)
			}
			index[ev.GetEventId()] = len(calls)
			calls = append(calls, modelCall{entryID: in.EntryID})
		}
		if a := ev.GetActivityTaskTimedOutEventAttributes(); a != nil {
			if i, ok := index[a.GetScheduledEventId()]; ok {
				calls[i].timedOut = a.GetFailure().GetTimeoutFailureInfo().GetTimeoutType().String()
			}
		}
	}
	return calls
}

// timeoutsOf names the timeouts in a history (what a kill cost): model
// calls, session writes and workflow tasks left behind by the dead worker.
func timeoutsOf(hist []*historypb.HistoryEvent) string {
	names := map[int64]string{}
	var out []string
	for _, ev := range hist {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			names[ev.GetEventId()] = a.GetActivityType().GetName()
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() > 1 {
			// A retried activity records only its last attempt.
			out = append(out, fmt.Sprintf("%s retried (attempt %d after %q)", names[a.GetScheduledEventId()],
				a.GetAttempt(), a.GetLastFailure().GetMessage()))
		}
		if a := ev.GetActivityTaskTimedOutEventAttributes(); a != nil {
			out = append(out, names[a.GetScheduledEventId()]+" "+a.GetFailure().GetTimeoutFailureInfo().GetTimeoutType().String())
		}
		if a := ev.GetWorkflowTaskTimedOutEventAttributes(); a != nil {
			out = append(out, "workflow task "+a.GetTimeoutType().String())
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// killedCall reads the killed worker's log: the model calls it began, and
// the one it was inside when it died ("" if none).
func killedCall(log []string) (begun []string, inside string) {
	open := map[string]bool{}
	for _, line := range log {
		what, id, _ := strings.Cut(line, " ")
		switch what {
		case callBegin:
			begun = append(begun, id)
			open[id] = true
		case callEnd:
			delete(open, id)
		}
	}
	for id := range open {
		inside = id
	}
	return begun, inside
}

// checkKillTrial checks one trial and reports whether its kill landed
// inside a model call.
func checkKillTrial(t *testing.T, tr *trial) (inCall bool) {
	checkCompleted(t, tr)
	if tr.res.Text == "" {
		t.Fatalf("prompt completed with no answer after the new worker started: %+v", tr.res)
	}

	// Where did the kill land? The killed worker's log says which model
	// calls its code began and ended; history says which call, if any,
	// Temporal timed out. They must agree.
	calls := modelCalls(t, tr.hist)
	begun, inside := killedCall(tr.killedLog)
	var lost []int
	for i, c := range calls {
		if c.timedOut != "" {
			lost = append(lost, i)
		}
	}
	lostCall, where := -1, "outside a model call"
	switch {
	case len(lost) > 1:
		t.Fatalf("%d model calls timed out for one kill: %+v", len(lost), calls)
	case inside != "" && (len(lost) != 1 || calls[lost[0]].entryID != inside):
		t.Fatalf("the worker died inside call %s, but history shows timed-out calls %v of %+v", inside, lost, calls)
	case len(lost) == 0:
	case inside != "":
		lostCall, where = lost[0], fmt.Sprintf("inside model call %d", lost[0])
	case lost[0] == len(begun)-1 && calls[lost[0]].entryID == begun[lost[0]]:
		lostCall, where = lost[0], fmt.Sprintf("inside model call %d, after it returned and before Temporal recorded it", lost[0])
	case lost[0] == len(begun):
		// Temporal had handed the call to the worker, which died before
		// the call's code began (the worker had not logged it yet).
		lostCall, where = lost[0], fmt.Sprintf("inside model call %d, handed to the worker but not yet begun", lost[0])
	default:
		t.Fatalf("call %d (%s) timed out, but the killed worker had begun %v and was in none", lost[0], calls[lost[0]].entryID, begun)
	}
	if lostCall >= 0 && calls[lostCall].timedOut != "Heartbeat" {
		t.Fatalf("the lost call timed out by %s, want Heartbeat", calls[lostCall].timedOut)
	}

	// A lost call whose activity wrote its own answer to the session
	// before the worker died (the kill fell between that write and
	// Temporal recording the result): the workflow keeps the session's
	// record, so the call's outcome is the scripted one, not a
	// connection error.
	if lostCall >= 0 {
		if en := entryByID(tr.file, calls[lostCall].entryID); en != nil && en.Message != nil && en.Message.ErrorMessage != heartbeatLost {
			where += ", after its answer reached the session"
			lostCall = -1
		}
	}

	// The outcome of every model call; "" is the answer.
	outcomes := []string{e503, e503, ""}
	if lostCall >= 0 {
		outcomes[lostCall] = heartbeatLost
		if lostCall == len(outcomes)-1 {
			outcomes = append(outcomes, "")
		}
	}
	t.Logf("kill after %v landed %s; prompt took %v; timeouts: %s", tr.delay.Round(time.Millisecond), where,
		tr.elapsed.Round(time.Millisecond), timeoutsOf(tr.hist))
	checkEvents(t, tr.events, expectedEvents(outcomes, killBaseDelayMs, 3))
	checkSessionEntries(t, tr)
	return lostCall >= 0
}

// entryByID is the session file's entry with this id, or nil.
func entryByID(f sessionFile, id string) *session.Entry {
	for i := range f.entries {
		if f.entries[i].ID == id {
			return &f.entries[i]
		}
	}
	return nil
}

// expectedEvents is the event sequence of a prompt whose model calls have
// these outcomes (error texts; "" is the answer, which must be last).
func expectedEvents(outcomes []string, baseDelayMs int64, maxRetries int) []agent.Event {
	var evs []agent.Event
	add := func(e agent.Event) {
		e.Seq = int64(len(evs) + 1)
		evs = append(evs, e)
	}
	errs := 0
	for _, o := range outcomes {
		add(agent.Event{Type: agent.EventAgentStart})
		if o == "" {
			add(agent.Event{Type: agent.EventMessageEnd, StopReason: agent.StopReasonStop})
			add(agent.Event{Type: agent.EventAgentEnd, StopReason: agent.StopReasonStop})
			if errs > 0 {
				add(agent.Event{Type: agent.EventAutoRetryEnd, Success: true, Attempt: errs})
			}
			add(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusCompleted})
			return evs
		}
		errs++
		add(agent.Event{Type: agent.EventMessageEnd, StopReason: agent.StopReasonError, ErrorMessage: o})
		add(agent.Event{Type: agent.EventAgentEnd, WillRetry: true, StopReason: agent.StopReasonError, ErrorMessage: o})
		add(agent.Event{Type: agent.EventAutoRetryStart, Attempt: errs, MaxAttempts: maxRetries,
			DelayMs: baseDelayMs << (errs - 1), ErrorMessage: o})
	}
	return evs
}

// checkEvents compares events field by field with the expected sequence
// (message_end is compared by its message's stop reason and error).
func checkEvents(t *testing.T, got, want []agent.Event) {
	t.Helper()
	for i, e := range got {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: the sequence has a gap (events %s)", i, e.Seq, typesOf(got))
		}
	}
	got = contractEvents(got)
	if len(got) != len(want) {
		t.Fatalf("events %s\nwant   %s", typesOf(got), typesOf(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Type == agent.EventMessageEnd && g.Message != nil {
			g.StopReason, g.ErrorMessage = g.Message.StopReason, g.Message.ErrorMessage
		}
		if g.Type != w.Type || g.Attempt != w.Attempt || g.MaxAttempts != w.MaxAttempts ||
			g.DelayMs != w.DelayMs || g.Success != w.Success || g.WillRetry != w.WillRetry ||
			g.StopReason != w.StopReason || g.ErrorMessage != w.ErrorMessage || g.Status != w.Status || g.FinalError != w.FinalError {
			t.Fatalf("event %d is %s\nwant        %s\n(events %s)", i, eventFields(g), eventFields(w), typesOf(got))
		}
	}
}

// eventFields shows the fields checkEvents compares.
func eventFields(e agent.Event) string {
	return fmt.Sprintf("{seq %d %s attempt %d/%d delay %d success %t willRetry %t stop %q error %q status %q final %q}",
		e.Seq, e.Type, e.Attempt, e.MaxAttempts, e.DelayMs, e.Success, e.WillRetry, e.StopReason, e.ErrorMessage, e.Status, e.FinalError)
}

// checkSessionEntries: the session file holds the user message and one
// entry per model call, each once, in call order, every answer and error
// a child of the user message (errors are dropped from the run context,
// not from the file), and the prompt's leaf is the answer.
func checkSessionEntries(t *testing.T, tr *trial) {
	t.Helper()
	f := tr.file
	if len(f.warnings) > 0 || f.lines != len(f.entries) {
		t.Fatalf("session file has %d entry lines for %d entries, warnings %q:\n%s", f.lines, len(f.entries), f.warnings, f.raw)
	}
	want := []string{}
	for _, ev := range tr.events {
		if ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role != agent.RoleUser {
			want = append(want, ev.EntryID)
		}
	}
	var got []string
	for _, en := range f.entries[1:] {
		got = append(got, en.ID)
	}
	user := f.entries[0]
	if user.Message == nil || user.Message.Role != agent.RoleUser || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("session entries %v after user %q, want one per model call %v:\n%s", got, user.ID, want, f.raw)
	}
	for _, en := range f.entries[1:] {
		if en.ParentID != user.ID {
			t.Fatalf("entry %s has parent %q, want the user message %s", en.ID, en.ParentID, user.ID)
		}
	}
	if tr.res.LeafID != want[len(want)-1] {
		t.Fatalf("prompt leaf %s, want the answer %s", tr.res.LeafID, want[len(want)-1])
	}
}

// contractEvents keeps the events of the retry contract (SPEC 10): the
// tool loop's turn_start, turn_end, message_start and the user message's
// message_end are left out (their order is tested in workflows).
func contractEvents(evs []agent.Event) []agent.Event {
	var out []agent.Event
	for _, e := range evs {
		switch {
		case e.Type == agent.EventTurnStart, e.Type == agent.EventTurnEnd, e.Type == agent.EventMessageStart:
		case e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleUser:
		default:
			out = append(out, e)
		}
	}
	return out
}
