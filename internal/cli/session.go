package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/sysprompt"
)

const sessionUsage = `starter session list [--store S]
       starter session export [--session ID] [--store S] [--out FILE]
       starter session import [--session ID] [--store S] FILE|-
       starter session copy (--session ID | --all) --from S --to S
       starter session delete --session ID [--force] [--json]
       starter session set KEY VALUE --session ID [--json]
S is a session store, jsonl or postgres, read or written directly with its settings;
list and export without --store read the workers' store through them`

// runSession moves sessions between the stores: the JSONL files of one
// machine and the PostgreSQL database of a cluster. The exchange format
// is the JSONL session file itself (a header line, then one entry per
// line), so an export can be read, diffed, archived or dropped into a
// sessions directory as it is. Writes are idempotent by entry id: an
// import or copy repeated, or resumed after a failure, writes only what
// is missing.
func runSession(ctx context.Context, env Env, args []string) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(env.Stderr, "starter session: want a subcommand: list, export, import, copy, delete or set\nusage: %s\n", sessionUsage)
		return ExitUsage
	}
	sub, args := args[0], args[1:]
	c := newFlags("session "+sub, env)
	store := c.fs.String("store", "", "session store: jsonl or postgres (default: session.store)")
	var out, from, to *string
	var all, force *bool
	n, want := 0, "" // the arguments besides the flags (parseArgs)
	switch sub {
	case "delete":
		force = c.fs.Bool("force", false, "delete a --worktree session whose worktree has uncommitted changes or whose branch has commits no other branch has")
		want = "starter session delete --session ID [--force] [--json]"
	case "list":
	case "import":
		n, want = 1, "one argument: the session file, or - for stdin"
	case "set":
		n, want = 2, "two arguments: KEY VALUE, KEY one of "+strings.Join(settings.SessionKeys(), ", ")
	case "export":
		out = c.fs.String("out", "", "write the session to `FILE` (default: stdout)")
	case "copy":
		from = c.fs.String("from", "", "store to copy from: jsonl or postgres")
		to = c.fs.String("to", "", "store to copy to: jsonl or postgres")
		all = c.fs.Bool("all", false, "copy every session of --from")
	default:
		fmt.Fprintf(env.Stderr, "starter session: unknown subcommand %q (want list, export, import, copy, delete or set)\n", sub)
		return ExitUsage
	}
	if !c.parseArgs(env, args, n, want) {
		return ExitUsage
	}
	s, ok := c.settings(env)
	if !ok {
		return ExitUsage
	}
	name := "session " + sub
	switch sub {
	case "set":
		return sessionSet(ctx, env, c)
	case "delete":
		return sessionDelete(ctx, env, c, *store, *force)
	case "list":
		defer c.closeReader()
		st, _, err := openSource(ctx, c, s, *store)
		var ids []string
		if err == nil {
			ids, err = st.List()
		}
		if err != nil {
			return fail(env, name, err)
		}
		fmt.Fprint(env.Stdout, strings.Join(append(ids, ""), "\n"))
		return ExitOK
	case "export":
		defer c.closeReader()
		return sessionExport(ctx, env, c, s, *store, c.session, *out)
	case "import":
		return sessionImport(env, s, *store, c.fs.Arg(0), c.session, c.fs.Changed("session"))
	default:
		if *from == "" || *to == "" {
			return fail(env, name, errors.New("--from and --to are required"))
		}
		if *all == c.fs.Changed("session") {
			return fail(env, name, errors.New("give either --session ID or --all"))
		}
		return sessionCopy(env, s, *from, *to, c.session, *all)
	}
}

// openStore opens store kind ("": session.store) of the settings
// (client.OpenSessionStore refuses an unknown kind).
func openStore(s settings.Settings, kind string) (session.Backend, string, error) {
	s.Session.Store = cmp.Or(kind, s.Session.Store)
	st, err := client.OpenSessionStore(s)
	return st, s.Session.Store, err
}

// sessionSource is where list and export read: the store --store names,
// read directly (moving sessions between stores is the point of these
// commands, so they take the store's settings), or without --store the
// workers' store, read through them (SessionRead) like every other
// read of the starter.
type sessionSource interface {
	List() ([]string, error)
	Load(id string) (*session.Session, error)
	Aside(id, key string) ([]byte, error)
}

// workerStore reads the workers' store through them.
type workerStore struct {
	ctx context.Context
	k   *client.Controller
}

func (w workerStore) Load(id string) (*session.Session, error) { return w.k.ReadSession(w.ctx, id) }
func (w workerStore) Aside(id, key string) ([]byte, error) {
	return w.k.ReadSessionAside(w.ctx, id, key)
}
func (w workerStore) List() ([]string, error) {
	sums, err := w.k.SessionSummaries(w.ctx)
	ids := make([]string, len(sums))
	for i, sum := range sums {
		ids[i] = sum.Header.ID
	}
	return ids, err
}

// openSource opens store kind, or ("") the workers' store.
func openSource(ctx context.Context, c *common, s settings.Settings, kind string) (sessionSource, string, error) {
	if kind != "" {
		return openStore(s, kind)
	}
	k, err := c.reader(ctx, s)
	if err != nil {
		return nil, "", err
	}
	return workerStore{ctx, k}, "the workers' store", nil
}

func sessionExport(ctx context.Context, env Env, c *common, s settings.Settings, kind, id, out string) int {
	const name = "session export"
	st, kind, err := openSource(ctx, c, s, kind)
	if err != nil {
		return fail(env, name, err)
	}
	if id == "" {
		return fail(env, name, errors.New("--session ID is required"))
	}
	sess, err := st.Load(id)
	if err != nil {
		return fail(env, name, err)
	}
	// The kept system prompt text goes with the session (spec 7.6): an
	// import keeps it as the source kept it.
	var b bytes.Buffer
	text, err := st.Aside(id, session.SystemPromptKey)
	if err == nil {
		err = session.WriteExport(&b, sess, text)
	}
	if err == nil && out != "" {
		err = writeNewFile(out, b.String())
	} else if err == nil {
		_, err = b.WriteTo(env.Stdout)
	}
	if err != nil {
		return fail(env, name, err)
	}
	for _, warn := range sess.Warnings {
		fmt.Fprintf(env.Stderr, "starter %s: warning: %s\n", name, warn)
	}
	fmt.Fprintf(env.Stderr, "exported session %s from %s: %d entries to %s\n", id, kind, len(sess.Entries), cmp.Or(out, "stdout"))
	return ExitOK
}

// readSession parses a session file with the JSONL store's own reader:
// bad lines are skipped with warnings, as Load does. It returns the kept
// system prompt text an export carries too (nil when none), checked
// against the session's system_prompt record.
func readSession(r io.Reader) (*session.Session, []byte, error) {
	dir, err := os.MkdirTemp("", "starter-import-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	h, text, err := session.DecodeExportHeader(first)
	if err != nil {
		return nil, nil, err
	}
	if err := session.ValidateID(h.ID); err != nil {
		return nil, nil, fmt.Errorf("session file header: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, h.ID+".jsonl"), data, 0o600); err != nil {
		return nil, nil, err
	}
	st, err := session.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	sess, err := st.Load(h.ID)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSystemPrompt(sess, text); err != nil {
		return nil, nil, err
	}
	return sess, text, nil
}

// checkSystemPrompt refuses an export whose system prompt text is not
// the one its last system_prompt record names (edited by hand, or cut):
// the session's model calls would send a text its record does not
// describe.
func checkSystemPrompt(sess *session.Session, text []byte) error {
	if text == nil {
		return nil
	}
	rec, ok := sess.SystemPrompt()
	if !ok {
		return errors.New("the header's systemPrompt has no system_prompt record in the session to belong to")
	}
	if got := sysprompt.Hash(string(text)); got != rec.Hash {
		return fmt.Errorf("the header's systemPrompt does not match the session's system_prompt record (its text hashes to %.12s…, the record names %.12s…)", got, rec.Hash)
	}
	return nil
}

func sessionImport(env Env, s settings.Settings, kind, file, id string, rename bool) int {
	const name = "session import"
	var r io.Reader = env.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return fail(env, name, err)
		}
		defer f.Close()
		r = f
	}
	sess, text, err := readSession(r)
	if err != nil {
		return fail(env, name, fmt.Errorf("read %s: %w", file, err))
	}
	for _, warn := range sess.Warnings {
		fmt.Fprintf(env.Stderr, "starter %s: warning: %s\n", name, warn)
	}
	if _, recorded := sess.SystemPrompt(); recorded && text == nil {
		fmt.Fprintf(env.Stderr, "starter %s: warning: the file has no system prompt text (exported by an older starter): the session's next prompt builds a new system prompt\n", name)
	}
	if !rename {
		id = sess.Header.ID
	}
	st, kind, err := openStore(s, kind)
	if err != nil {
		return fail(env, name, err)
	}
	n, err := putSession(st, id, sess, text)
	if err != nil {
		return fail(env, name, err)
	}
	fmt.Fprintf(env.Stdout, "imported session %s into %s: %d entries written, %d already there\n", id, kind, n, len(sess.Entries)-n)
	return ExitOK
}

// putSession creates the session with the source's workspace (and
// worktree), appends its entries in order, in batches, and keeps its
// system prompt text beside it (spec 7.6; nil: none); it returns how
// many entries were new.
func putSession(st session.Backend, id string, sess *session.Session, systemPrompt []byte) (int, error) {
	if _, err := st.Init(id, sess.Header); err != nil {
		return 0, err
	}
	const batch = 256
	written := 0
	for i := 0; i < len(sess.Entries); i += batch {
		n, err := st.Append(id, sess.Entries[i:min(i+batch, len(sess.Entries))]...)
		if err != nil {
			return written, err
		}
		written += n
	}
	if systemPrompt != nil {
		return written, st.PutAside(id, session.SystemPromptKey, systemPrompt)
	}
	return written, nil
}

func sessionCopy(env Env, s settings.Settings, from, to, id string, all bool) int {
	const name = "session copy"
	if from == to {
		return fail(env, name, fmt.Errorf("--from and --to are both %s", from))
	}
	src, from, err := openStore(s, from)
	if err != nil {
		return fail(env, name, err)
	}
	dst, to, err := openStore(s, to)
	if err != nil {
		return fail(env, name, err)
	}
	ids := []string{id}
	if all {
		if ids, err = src.List(); err != nil {
			return fail(env, name, err)
		}
	}
	for _, id := range ids {
		sess, err := src.Load(id)
		var text []byte
		if err == nil {
			text, err = src.Aside(id, session.SystemPromptKey)
		}
		if err != nil {
			return fail(env, name, err)
		}
		n, err := putSession(dst, id, sess, text)
		if err != nil {
			return fail(env, name, err)
		}
		// Check the copy: every source entry is in the target, in order.
		got, err := dst.Load(id)
		if err != nil {
			return fail(env, name, err)
		}
		var missing []string
		for _, e := range sess.Entries {
			if _, ok := got.Get(e.ID); !ok {
				missing = append(missing, e.ID)
			}
		}
		if len(missing) > 0 {
			return fail(env, name, fmt.Errorf("session %s: entries missing in %s after the copy: %s", id, to, strings.Join(missing, ", ")))
		}
		fmt.Fprintf(env.Stdout, "copied session %s from %s to %s: %d entries written, %d already there\n",
			id, from, to, n, len(sess.Entries)-n)
	}
	return ExitOK
}
