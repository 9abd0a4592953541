package cli

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// workspaceFlags are --workspace, --continue and --host of prompt, chat
// and rpc.
type workspaceFlags struct {
	workspace, host string
	cont            bool
	// fresh: resolve named a new session (no --session, no --continue).
	fresh bool
}

func (c *common) addWorkspaceFlags() *workspaceFlags {
	w := &workspaceFlags{}
	c.fs.StringVar(&w.workspace, "workspace", "", "the directory a new session's tools work in (default: the current directory; a session keeps the workspace it was created with)")
	c.fs.BoolVarP(&w.cont, "continue", "c", false, "continue the most recent session whose workspace is this directory (or --workspace)")
	c.fs.StringVar(&w.host, "host", "", "the tool host (a worker's tools.host) a new session is created on, refused when it lacks the workspace (default: session.host, else a host that has it)")
	return w
}

// resolve makes the workspace absolute (the current directory when not
// given) and chooses the session: with --continue the newest session of
// the workspace; without --session a new one; with --session one that is
// new or already works in this workspace. A session's workspace is fixed
// when it starts, so a prompt that names or implies another one for it is
// refused here, before anything starts (docs/spec.md 14.2.1).
func (w *workspaceFlags) resolve(c *common, s settings.Settings) error {
	if w.workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("current directory: %w (use --workspace DIR)", err)
		}
		w.workspace = wd
	} else if abs, err := filepath.Abs(w.workspace); err == nil {
		w.workspace = abs
	}
	// A server on this machine (worker --dev, the demo) has its workers
	// here too, which would fail the prompt for a missing workspace; a
	// remote one's workers may have it (docs/cluster.md).
	if _, err := codec.LoopbackAddress(s.Temporal.Address); err == nil {
		if fi, err := os.Stat(w.workspace); err != nil || !fi.IsDir() {
			return fmt.Errorf("--workspace %s is not a directory on this machine, where the workers of the Temporal server at %s run", w.workspace, s.Temporal.Address)
		}
	}
	switch {
	case w.cont && c.fs.Changed("session"):
		return errors.New("give --continue or --session, not both")
	case w.cont:
		id, err := c.latestSessionIn(s, w.workspace)
		if err == nil && id == "" {
			err = fmt.Errorf("no session in %s to continue (start one with starter prompt MESSAGE; starter sessions lists them)", w.workspace)
		}
		c.session = id
		if err != nil {
			return fmt.Errorf("--continue: %w", err)
		}
		return nil
	case c.session == "":
		c.session, w.fresh = newSessionID(w.workspace, time.Now()), true
		return nil
	}
	return c.checkWorkspace(s, c.session, w.workspace)
}

// checkWorkspace refuses dir for an existing session that works elsewhere
// (a --worktree session is also at home in the directory it was started
// from). The session is read through the workers; when none answers the
// check is left to the session, which keeps its workspace anyway.
func (c *common) checkWorkspace(s settings.Settings, id, dir string) error {
	h, err := c.readHeader(s, id)
	if errors.Is(err, session.ErrNotFound) || errors.Is(err, client.ErrNoWorker) {
		return nil
	} else if err != nil {
		return fmt.Errorf("session %s: cannot read its workspace: %w", id, err)
	}
	sum := summaryOf(session.Summary{Header: h})
	if sum.Workspace == "" || sum.in(dir) {
		return nil
	}
	home := cmp.Or(sum.from, sum.Workspace)
	return fmt.Errorf("session %s works in %s, not %s: a session keeps its workspace (run it from %s, or leave out --session for a new session here)", id, home, dir, home)
}

// readHeader reads the header of session id through the workers (an
// error that is session.ErrNotFound when their store has no such
// session).
func (c *common) readHeader(s settings.Settings, id string) (session.Header, error) {
	if c.header != nil && c.headerOf == id {
		return *c.header, c.headerErr
	}
	k, err := c.reader(context.Background(), s)
	if err != nil {
		return session.Header{}, err
	}
	h, err := k.ReadHeader(context.Background(), id)
	c.header, c.headerOf, c.headerErr = &h, id, err
	return h, err
}

// newSessionID names a new session after its workspace's directory and the
// time, e.g. myproject-20261207-105301-3fa9: readable in starter sessions,
// a valid branch name for --worktree (agent/<id>), and two prompts of one
// second do not meet (four random hex digits).
func newSessionID(dir string, now time.Time) string {
	base := strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, filepath.Base(dir)), "-")
	if len(base) > 40 {
		base = strings.TrimRight(base[:40], "-")
	}
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return cmp.Or(base, "session") + "-" + now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// sessionFromDir are the commands that, without --session, act on the
// newest session of the current directory, as prompt -c continues it.
// prompt, chat and rpc start a new session instead (resolve), and
// session export, set and delete need --session.
var sessionFromDir = map[string]bool{
	"abort": true, "abort-retry": true, "state": true, "events": true,
	"steer": true, "follow-up": true, "approve": true, "compact": true, "diff": true, "show": true,
}

// impliedSession sets c.session, when --session was not given, for the
// commands of sessionFromDir.
func (c *common) impliedSession(s settings.Settings) error {
	if c.session != "" || !sessionFromDir[c.fs.Name()] {
		return nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("current directory: %w (give --session ID)", err)
	}
	id, err := c.latestSessionIn(s, wd)
	if err == nil && id == "" {
		err = fmt.Errorf("no session in %s: give --session ID (starter sessions lists them)", wd)
	}
	c.session = id
	return err
}

// latestSessionIn is the session with the most recent activity whose
// workspace is dir, or that was started in dir with a worktree (its
// workspace is the worktree; the user stays in the repository); "" when
// there is none.
func (c *common) latestSessionIn(s settings.Settings, dir string) (string, error) {
	k, err := c.reader(context.Background(), s)
	if err != nil {
		return "", err
	}
	all, err := k.SessionSummaries(context.Background())
	if err != nil {
		return "", err
	}
	return latestIn(sessionLines(all), dir), nil
}

// latestIn is the first session of sums (newest first) of dir.
func latestIn(sums []sessionSummary, dir string) string {
	for _, sum := range sums {
		if sum.in(dir) {
			return sum.ID
		}
	}
	return ""
}

// in says whether the session works in dir, or was started in dir with
// a worktree.
func (s sessionSummary) in(dir string) bool {
	return s.Workspace != "" && filepath.Clean(s.Workspace) == dir || s.from != "" && filepath.Clean(s.from) == dir
}

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
