package cli

import (
	"context"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// place sets the tool host of a prompt's session with the one placement
// (client.Controller.Place, docs/cluster.md): id is the session, read
// through the workers (once per command, with the workspace check), or ""
// for a new one; named is --host.
func (c *common) place(ctx context.Context, k *client.Controller, s settings.Settings, id, named string, in *workflows.PromptInput) error {
	h, err := session.Header{}, error(session.ErrNotFound)
	if id != "" {
		h, err = c.readHeader(s, id)
	}
	return k.Place(ctx, in, named, s.Session.Host, h, err)
}
