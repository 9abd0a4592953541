package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/durableagent/durableagent/workflows"
)

// ErrNoSessionFile: a session setting was changed in a session that has
// no prompt yet (its first prompt records its settings).
var ErrNoSessionFile = errors.New("session has no prompt yet")

// SetSessionSetting changes one of the session's own settings
// (session.Settings) with the SessionWrite workflow, so it never
// interleaves with a prompt and shows in its events, and waits for it.
func (k *Controller) SetSessionSetting(ctx context.Context, sessionID string, c workflows.SessionSettingChange) error {
	run, err := k.StartSessionWrite(ctx, workflows.SessionWriteInput{SessionID: sessionID, Change: &c})
	if err != nil {
		return err
	}
	var res workflows.SessionWriteResult
	if err := run.Get(ctx, &res); err != nil {
		return fmt.Errorf("set %s of session %s: %w", c.Key, sessionID, err)
	}
	if !res.Written {
		return fmt.Errorf("set %s of session %s: %w: its first prompt records its settings", c.Key, sessionID, ErrNoSessionFile)
	}
	return nil
}
