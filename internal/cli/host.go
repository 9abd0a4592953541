package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// placeSession sets the tool host of the prompt's session before it
// starts (docs/cluster.md): a new session goes to named (--host), else to
// session.host, else to a host that has its workspace; a host without it
// is refused in one line. An existing session keeps its host: --host
// naming another is refused, naming its own checks the workspace there.
func (c *common) placeSession(ctx context.Context, k *client.Controller, s settings.Settings, named string, fresh bool, in *workflows.PromptInput) error {
	if !fresh {
		h, err := c.readHeader(s, in.SessionID)
		switch {
		case errors.Is(err, session.ErrNotFound): // new: placed below
		case errors.Is(err, client.ErrNoWorker) && named == "":
			return nil // no worker to ask: the session's own host decides, as before
		case errors.Is(err, client.ErrNoWorker): // the named host is asked below
		case err != nil:
			return fmt.Errorf("session %s: %w", in.SessionID, err)
		case named == "":
			return nil
		case h.Host != named:
			return fmt.Errorf("session %s is on tool host %q, not %s: a session keeps the host it was created on (leave out --host)", in.SessionID, h.Host, named)
		default:
			_, err := k.PlaceSession(ctx, named, h.Cwd)
			return err
		}
	}
	host, err := k.PlaceSession(ctx, cmp.Or(named, s.Session.Host), in.Workspace)
	in.Host = host
	return err
}
