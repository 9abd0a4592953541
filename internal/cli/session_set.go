package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// sessionSet changes one of a session's own settings (what the model
// may do: settings.SessionKeys). The session's first prompt
// recorded them; every later prompt, from any terminal, runs with them
// until this changes one. The change is written by the SessionWrite
// workflow and shows in the session's events.
func sessionSet(ctx context.Context, env Env, c *common) int {
	const name = "session set"
	key, value := c.fs.Arg(0), c.fs.Arg(1)
	if _, err := (session.Settings{}).With(key, session.Settings{}); err != nil {
		return fail(env, name, err)
	}
	if c.session == "" {
		return fail(env, name, errors.New("--session ID is required"))
	}
	return c.dialed(ctx, func(k *client.Controller, s settings.Settings) int {
		if err := settings.SetText(&s, key, value); err != nil {
			return fail(env, name, err)
		}
		if err := s.Validate(); err != nil {
			return fail(env, name, err)
		}
		from := workflows.SessionSettingsOf(client.PromptInput(s, c.session, "session set"))
		err := k.SetSessionSetting(ctx, c.session, workflows.SessionSettingChange{Key: key, Value: value, From: from})
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return ExitUsage
			}
			return fail(env, name, err)
		}
		printResult(env, c.json, map[string]any{"success": true, "command": "session_set", "sessionId": c.session, "key": key, "value": value},
			fmt.Sprintf("session %s: %s set to %q", c.session, key, value))
		return ExitOK
	})
}
