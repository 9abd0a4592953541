package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/workflows"
)

// A client reads sessions through the workers, never from the store
// itself: the SessionRead workflow runs on the worker task queue and
// returns one bounded page of the workers' store. A starter then needs
// only the Temporal address (and its TLS or API key) to see what the
// workers see, and one mechanism serves JSONL files and PostgreSQL alike.

// ErrNoWorker: no worker answered a read (none polls the task queue, or
// none had time).
var ErrNoWorker = errors.New("no worker answered")

// DefaultReadWait bounds one page's read: a read nobody answers (no
// worker polls the task queue) fails after it.
const DefaultReadWait = 15 * time.Second

// SessionSummaries are the summaries of every session of the workers'
// store, in id order.
func (k *Controller) SessionSummaries(ctx context.Context) ([]session.Summary, error) {
	var sums []session.Summary
	for after := 0; ; {
		page, err := k.readPage(ctx, activities.ReadSessionInput{After: after})
		if err != nil {
			return nil, err
		}
		sums = append(sums, page.Summaries...)
		if after = page.Next; after == 0 {
			return sums, nil
		}
	}
}

// ReadSession loads a session from the workers' store, page by page. The
// reads of a session fail with an error wrapping session.ErrNotFound when
// the store has no such session.
func (k *Controller) ReadSession(ctx context.Context, id string) (*session.Session, error) {
	var sess *session.Session
	for after := 0; ; {
		page, err := k.readPage(ctx, activities.ReadSessionInput{SessionID: id, After: after})
		if err != nil {
			return nil, err
		}
		if sess == nil {
			sess = &session.Session{Header: *page.Header, Warnings: page.Warnings}
		}
		sess.Entries = append(sess.Entries, page.Entries...)
		if after = page.Next; after == 0 {
			return sess, nil
		}
	}
}

// ReadHeader reads a session's header from the workers' store; an
// unknown session is a one-line error that is session.ErrNotFound.
func (k *Controller) ReadHeader(ctx context.Context, id string) (session.Header, error) {
	page, err := k.readPage(ctx, activities.ReadSessionInput{SessionID: id, HeaderOnly: true})
	if errors.Is(err, session.ErrNotFound) {
		err = fmt.Errorf("no session %q in the workers' session store (%w)", id, session.ErrNotFound)
	}
	if err != nil {
		return session.Header{}, err
	}
	return *page.Header, nil
}

// ReadEntry reads one entry of a session from the workers' store (ok
// false when the session has no such entry).
func (k *Controller) ReadEntry(ctx context.Context, id, entryID string) (e session.Entry, ok bool, err error) {
	page, err := k.readPage(ctx, activities.ReadSessionInput{SessionID: id, EntryID: entryID})
	if err != nil || len(page.Entries) == 0 {
		return e, false, err
	}
	return page.Entries[0], true, nil
}

// ReadSessionAside reads what the workers' store keeps beside a session
// under key (nil when nothing).
func (k *Controller) ReadSessionAside(ctx context.Context, id, key string) ([]byte, error) {
	page, err := k.readPage(ctx, activities.ReadSessionInput{SessionID: id, AsideKey: key})
	return page.Aside, err
}

// readPage runs one SessionRead and waits for its page up to
// DefaultReadWait.
func (k *Controller) readPage(ctx context.Context, in activities.ReadSessionInput) (activities.ReadSessionResult, error) {
	var out activities.ReadSessionResult
	if err := in.Validate(); err != nil {
		return out, err
	}
	what := "list sessions"
	if in.SessionID != "" {
		what = "read session " + in.SessionID
	}
	opts := client.StartWorkflowOptions{
		ID:        "session-read-" + newEntryID() + newEntryID(),
		TaskQueue: k.TaskQueue,
		// Temporal ends a read nobody runs; the client stops waiting too.
		WorkflowExecutionTimeout: DefaultReadWait,
		StaticSummary:            what,
	}
	run, err := k.Client.ExecuteWorkflow(ctx, opts, workflows.SessionReadWorkflowName, in)
	if err != nil {
		return out, fmt.Errorf("%s: %w", what, err)
	}
	wctx, cancel := context.WithTimeout(ctx, DefaultReadWait+5*time.Second)
	defer cancel()
	err = run.Get(wctx, &out)
	var timeout *temporal.TimeoutError
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &timeout) || wctx.Err() != nil && ctx.Err() == nil:
		return out, fmt.Errorf("%s: %w within %s: %s", what, ErrNoWorker, DefaultReadWait, k.pollers(ctx))
	case errors.As(err, &app):
		return out, fmt.Errorf("%s: %s", what, app.Message())
	case err != nil:
		return out, fmt.Errorf("%s: %w", what, err)
	case in.SessionID != "" && !out.Found: // a found session's first page and header read have its header
		return out, fmt.Errorf("%s: %w", what, session.ErrNotFound)
	}
	return out, nil
}

// Polled is how many workers polled the task queue lately (Temporal
// keeps a poller for a few minutes): with none, a read nobody can answer
// is known before it waits. err is why Temporal could not say.
func (k *Controller) Polled(ctx context.Context) (int, error) {
	dctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	resp, err := k.Client.DescribeTaskQueue(dctx, k.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	return len(resp.GetPollers()), err
}

// pollers says who polls the task queue: sessions are read by the
// workers, so a read with none fails naming the queue.
func (k *Controller) pollers(ctx context.Context) string {
	n, err := k.Polled(ctx)
	switch {
	case err != nil:
		return fmt.Sprintf("task queue %q could not be described: %v", k.TaskQueue, err)
	case n == 0:
		return fmt.Sprintf("no worker polls task queue %q (sessions are read through the workers: start one)", k.TaskQueue)
	}
	return fmt.Sprintf("%d workers poll task queue %q but none ran the read", n, k.TaskQueue)
}
