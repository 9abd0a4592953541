package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/durableagent/durableagent/internal/session"
)

// ReadSessionName is the local activity of the SessionRead workflow: one
// page of the worker's session store, for a client that has no access
// to the store (a laptop with only the cluster's address).
const ReadSessionName = "ReadSession"

// MaxReadPageBytes bounds the entries (or summaries) of one page, as
// JSON: a page is in the read's history twice (the local activity's
// marker and the result), far below Temporal's 2 MB payload limit. An
// entry bigger than that is a page of its own.
const MaxReadPageBytes = 256 << 10

// readPageTime bounds the time one list page spends loading sessions
// (below the local activity's timeout).
const readPageTime = 10 * time.Second

// ReadSessionInput asks for one page: the summaries of the store's
// sessions (SessionID ""), a session's entries, its header alone
// (HeaderOnly), one entry (EntryID), or the data kept beside a session
// under AsideKey.
type ReadSessionInput struct {
	SessionID string `json:"sessionId,omitempty"`
	// After is where the page starts: the number of entries (or, for a
	// list, of sessions in id order) the caller already has.
	After      int    `json:"after,omitempty"`
	HeaderOnly bool   `json:"headerOnly,omitempty"`
	EntryID    string `json:"entryId,omitempty"`
	AsideKey   string `json:"asideKey,omitempty"`
}

// Validate reports the first problem of the input in one line.
func (in ReadSessionInput) Validate() error {
	if in.After < 0 {
		return fmt.Errorf("invalid session read: after %d is negative", in.After)
	}
	if in.SessionID == "" {
		if in.AsideKey != "" || in.EntryID != "" || in.HeaderOnly {
			return errors.New("invalid session read: an entry or aside read without a session id")
		}
		return nil
	}
	if err := session.ValidateID(in.SessionID); err != nil {
		return fmt.Errorf("invalid session read: %w", err)
	}
	return nil
}

// ReadSessionResult is one page.
type ReadSessionResult struct {
	// Summaries are the sessions' summaries from After on, in id order
	// (an unreadable session says why in Unreadable).
	Summaries []session.Summary `json:"summaries,omitempty"`
	// Found is false when the store has no such session.
	Found bool `json:"found,omitempty"`
	// Header and Warnings come with a session's first page (After 0).
	Header   *session.Header `json:"header,omitempty"`
	Warnings []string        `json:"warnings,omitempty"`
	Entries  []session.Entry `json:"entries,omitempty"`
	// Next is the After of the next page; 0 when this page is the last.
	Next  int    `json:"next,omitempty"`
	Aside []byte `json:"aside,omitempty"`
}

// ReadSession reads one page of the worker's session store. It only
// reads, so Temporal may run it again.
func (a *Activities) ReadSession(_ context.Context, in ReadSessionInput) (ReadSessionResult, error) {
	if err := in.Validate(); err != nil {
		return ReadSessionResult{}, badInput(err)
	}
	switch {
	case in.SessionID == "":
		return a.readSummaries(in.After)
	case in.AsideKey != "":
		data, err := a.Sessions.Aside(in.SessionID, in.AsideKey)
		return ReadSessionResult{Found: true, Aside: data}, err
	}
	sess, err := a.Sessions.Load(in.SessionID)
	if errors.Is(err, session.ErrNotFound) {
		return ReadSessionResult{}, nil
	}
	if err != nil {
		return ReadSessionResult{}, err
	}
	res := ReadSessionResult{Found: true}
	if in.HeaderOnly {
		res.Header = &sess.Header
		return res, nil
	}
	if in.EntryID != "" {
		if e, ok := sess.Get(in.EntryID); ok {
			res.Entries = []session.Entry{e}
		}
		return res, nil
	}
	if in.After == 0 {
		res.Header, res.Warnings = &sess.Header, sess.Warnings
	}
	size := 0
	for i := in.After; i < len(sess.Entries); i++ {
		b, _ := json.Marshal(sess.Entries[i])
		if size += len(b); size > MaxReadPageBytes && len(res.Entries) > 0 {
			res.Next = i
			break
		}
		res.Entries = append(res.Entries, sess.Entries[i])
	}
	return res, nil
}

// readSummaries is a page of the store's session summaries.
func (a *Activities) readSummaries(after int) (ReadSessionResult, error) {
	ids, err := a.Sessions.List()
	if err != nil {
		return ReadSessionResult{}, err
	}
	var res ReadSessionResult
	start, size := time.Now(), 0
	for i := after; i < len(ids); i++ {
		if (size > MaxReadPageBytes || time.Since(start) > readPageTime) && len(res.Summaries) > 0 {
			res.Next = i
			break
		}
		sum := session.Summary{Header: session.Header{ID: ids[i]}}
		if sess, err := a.Sessions.Load(ids[i]); err != nil {
			sum.Unreadable = err.Error()
		} else {
			sum = session.Summarize(sess)
		}
		b, _ := json.Marshal(sum)
		size += len(b)
		res.Summaries = append(res.Summaries, sum)
	}
	return res, nil
}
