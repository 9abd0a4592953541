package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/internal/session"
)

// A session's own settings (what the model may do: tools, approval,
// session.Settings) are kept beside the session under
// session.SettingsKey, recorded by its first prompt: every later prompt,
// from any client, runs with them, and only an explicit change
// (SessionWrite) replaces them.

// SessionSettingsName is the local activity that reads, and records when
// missing or asked, a session's settings.
const SessionSettingsName = "SessionSettings"

// MaxSessionSettingsBytes bounds the settings a session keeps (they are
// in history with the result); the settings' own limits keep them far
// below.
const MaxSessionSettingsBytes = 32 << 10

// SessionSettingsInput is the input of SessionSettings.
type SessionSettingsInput struct {
	SessionID string `json:"sessionId"`
	// Proposed is recorded when the session has no settings yet, or
	// always with Replace.
	Proposed session.Settings `json:"proposed"`
	Replace  bool             `json:"replace,omitempty"`
	// Change, with Replace, is recorded in the session file as a custom
	// entry (session.CustomSettingsChange) under ChangeEntryID, after its
	// leaf.
	Change        *session.SettingsChange `json:"change,omitempty"`
	ChangeEntryID string                  `json:"changeEntryId,omitempty"`
}

// SessionSettingsResult holds the settings in force after the call.
type SessionSettingsResult struct {
	// Exists is false when the session has no file yet (nothing kept).
	Exists   bool             `json:"exists"`
	Settings session.Settings `json:"settings"`
	// Recorded says Proposed was written (first prompt, or Replace).
	Recorded bool `json:"recorded,omitempty"`
}

// SessionSettings returns the session's settings, recording Proposed
// first when it has none (or Replace asks). A re-run is harmless: it
// finds what the first run wrote.
func (a *Activities) SessionSettings(_ context.Context, in SessionSettingsInput) (SessionSettingsResult, error) {
	proposed, err := json.Marshal(in.Proposed)
	if err != nil || len(proposed) > MaxSessionSettingsBytes {
		msg := fmt.Sprintf("session settings of %s: more than %d bytes", in.SessionID, MaxSessionSettingsBytes)
		return SessionSettingsResult{}, temporal.NewNonRetryableApplicationError(msg, ErrTypeBadInput, err)
	}
	sess, err := a.load(in.SessionID)
	if errors.Is(err, session.ErrNotFound) {
		return SessionSettingsResult{}, nil
	}
	if err != nil {
		return SessionSettingsResult{}, err
	}
	kept, err := a.Sessions.Aside(in.SessionID, session.SettingsKey)
	if err != nil {
		return SessionSettingsResult{}, storeError("read session settings", err)
	}
	res := SessionSettingsResult{Exists: true}
	if kept != nil {
		if err := json.Unmarshal(kept, &res.Settings); err != nil {
			return SessionSettingsResult{}, storeError("read session settings", err)
		}
	}
	if kept == nil || (in.Replace && !bytes.Equal(kept, proposed)) {
		if err := a.Sessions.PutAside(in.SessionID, session.SettingsKey, proposed); err != nil {
			return SessionSettingsResult{}, storeError("keep session settings", err)
		}
		res.Settings, res.Recorded = in.Proposed, true
	}
	if _, done := sess.Get(in.ChangeEntryID); in.Replace && in.Change != nil && !done {
		// The change's custom entry after the leaf, once (a re-run finds it).
		data, err := json.Marshal(in.Change)
		if err == nil {
			_, err = a.Sessions.Append(in.SessionID, session.Entry{Type: session.TypeCustom, ID: in.ChangeEntryID,
				ParentID: sess.LeafID(), Timestamp: time.Now().UTC(), CustomType: session.CustomSettingsChange, Data: data})
		}
		if err != nil {
			return SessionSettingsResult{}, storeError("record settings change", err)
		}
	}
	return res, nil
}
