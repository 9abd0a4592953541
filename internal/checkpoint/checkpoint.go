// Package checkpoint keeps a session's workspace states as git trees in a git
// directory of the product's own (<dataDir>/checkpoints/<session id>, its own
// GIT_DIR and index), never the user's repository; a checkpoint is a
// parentless commit on refs/checkpoints/<seq>. Git runs outside the sandbox
// and reads nothing the model controls but file contents and .gitignore
// (docs/security.md, "Checkpoints"). Operations hold a flock the kernel drops
// with the process, under which a killed git's lock files are stale and
// removed: an interrupted Take harms nothing.
package checkpoint

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// Limits bounds a store; a zero field takes its default.
type Limits struct {
	MaxFileBytes int64 // larger files are left out of checkpoints (8 MiB)
	KeepCount    int   // checkpoints kept, the oldest dropped first (500)
	KeepBytes    int64 // size on disk (checked every tenth Take) over which the oldest go (1 GiB)
}

// Checkpoint is one recorded workspace state.
type Checkpoint struct {
	ID   string    // the commit's hash: what callers keep
	Tree string    // the tree's hash: equal trees mean equal recorded files
	N    int       `json:"-"` // numbers a store's checkpoints from 1; pruning keeps the numbers
	Time time.Time // when it was taken
	Turn
	// Skipped lists, sorted, files left out for their size and nested
	// repositories ("dir/"), at most 100 and then "... and N more".
	// Ignored paths and FIFOs, sockets or devices are left out unlisted.
	Skipped []string `json:",omitempty"`
}

// Turn is the conversation that goes with a checkpoint: it ends at Leaf,
// and Calls are the tool calls (or the action, "(rewind to 3)") that led
// from the checkpoint before to this one.
type Turn struct {
	Leaf  string   `json:",omitempty"`
	Calls []string `json:",omitempty"`
}

// Change is one path that differs between two states.
type Change struct {
	Path string
	Kind string // "added", "removed", "modified", "mode" or "type"
}

// Store is one session's checkpoint store.
type Store struct {
	dir, index string
	lim        Limits
}

const refPrefix = "refs/checkpoints/"

// attributes, in info/attributes (ranked above any .gitattributes), unsets
// every attribute that converts contents or picks a diff driver.
const attributes = "* -text !eol !crlf !ident !filter !working-tree-encoding !diff !merge\n"

// Open opens (creating) the store at dir (<dataDir>/checkpoints/<session id>).
func Open(dir string, lim Limits) (*Store, error) {
	lim.MaxFileBytes = cmp.Or(lim.MaxFileBytes, 8<<20)
	lim.KeepCount = cmp.Or(lim.KeepCount, 500)
	lim.KeepBytes = cmp.Or(lim.KeepBytes, 1<<30)
	s := &Store{dir: dir, index: filepath.Join(dir, "index"), lim: lim}
	attrs := filepath.Join(dir, "git", "info", "attributes")
	if _, err := os.Stat(attrs); err == nil {
		return s, nil
	}
	err := os.MkdirAll(dir, 0o700)
	if err == nil {
		err = s.locked(func() error {
			if _, err := os.Stat(attrs); err == nil {
				return nil // made by another Open while this one waited
			}
			// Not made yet, or a worker died making it (a git init
			// killed midway leaves config.lock): start it again.
			if err := os.RemoveAll(filepath.Join(dir, "git")); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(attrs), 0o700); err != nil {
				return err
			}
			if _, err := s.git(context.Background(), dir, "", "init", "-q", "--template="); err != nil {
				return err
			}
			return os.WriteFile(attrs, []byte(attributes), 0o600) // last: a store without it is not made yet
		})
	}
	if err != nil {
		return nil, fmt.Errorf("open checkpoint store: %w", err)
	}
	return s, nil
}

// Take records workspace's files (a git repository or not) as checkpoint
// turn; the same tree twice gives a new ID with an equal Tree. Ignored
// paths and files over MaxFileBytes are left out (see Skipped). It prunes
// past the store's Limits, oldest first.
func (s *Store) Take(ctx context.Context, workspace string, turn Turn) (Checkpoint, error) {
	return s.take(ctx, workspace, turn, false)
}

// Next is Take for a prompt's turns, except that when the workspace's
// recorded files equal the newest checkpoint's it records nothing and
// returns that one: a turn that changed nothing adds no checkpoint.
func (s *Store) Next(ctx context.Context, workspace string, turn Turn) (Checkpoint, error) {
	return s.take(ctx, workspace, turn, true)
}

func (s *Store) take(ctx context.Context, workspace string, turn Turn, reuse bool) (c Checkpoint, err error) {
	err = s.locked(func() error {
		if c.Tree, c.Skipped, err = s.snapshot(ctx, workspace); err != nil {
			return err
		}
		if reuse {
			list, err := s.List(ctx)
			if n := len(list); err != nil || (n > 0 && list[n-1].Tree == c.Tree) {
				if n > 0 {
					c = list[n-1]
				}
				return err
			}
		}
		// Refs stay loose (gc.packRefs is off) and without stale .lock files.
		ents, _ := os.ReadDir(filepath.Join(s.dir, "git", refPrefix))
		refs, seq := []string{}, 1
		for _, e := range ents {
			refs = append(refs, e.Name())
			seq, _ = strconv.Atoi(e.Name())
			seq++
		}
		c.N, c.Turn = seq, turn
		if n := len(c.Skipped); n > 100 {
			c.Skipped = append(c.Skipped[:100], fmt.Sprintf("... and %d more", n-100))
		}
		c.Time = time.Now().UTC() // in nanoseconds: the same tree's next commit is new
		msg, _ := json.Marshal(c)
		if c.ID, err = s.git(ctx, workspace, string(msg), "commit-tree", c.Tree); err != nil {
			return err
		}
		c.ID = strings.TrimSpace(c.ID)
		ref := fmt.Sprintf("%012d", seq)
		if _, err = s.git(ctx, workspace, "", "update-ref", refPrefix+ref, c.ID, strings.Repeat("0", 40)); err != nil {
			return err
		}
		return s.prune(ctx, append(refs, ref), seq%10 == 0)
	})
	return c, err
}

// List returns the store's checkpoints, oldest first.
func (s *Store) List(ctx context.Context) ([]Checkpoint, error) {
	out, err := s.git(ctx, s.dir, "", "for-each-ref", "--format=%(refname:lstrip=2)%00%(objectname)%00%(tree)%00%(contents)%01", refPrefix)
	var list []Checkpoint
	for _, rec := range strings.Split(out, "\x01") {
		var c Checkpoint
		if f := strings.SplitN(strings.TrimPrefix(rec, "\n"), "\x00", 4); len(f) == 4 {
			if err := json.Unmarshal([]byte(f[3]), &c); err != nil {
				return nil, fmt.Errorf("checkpoint %s: unreadable record: %w", f[1], err)
			}
			c.N, _ = strconv.Atoi(f[0])
			c.ID, c.Tree = f[1], f[2]
			list = append(list, c)
		}
	}
	return list, err
}

// Changes lists what differs between checkpoint from and to; to == ""
// compares with the workspace's current files (the unrecorded changes since
// from), recorded by the same rules as Take.
func (s *Store) Changes(ctx context.Context, workspace, from, to string) ([]Change, error) {
	out, err := s.compare(ctx, workspace, from, to, "--raw", "-z")
	var changes []Change
	for f := strings.Split(out, "\x00"); len(f) > 1; f = f[2:] {
		meta := strings.Fields(f[0]) // :oldmode newmode oldsha newsha status
		if len(meta) != 5 {
			return nil, fmt.Errorf("checkpoint changes: unexpected git output %q", f[0])
		}
		kind := map[string]string{"A": "added", "D": "removed", "M": "modified", "T": "type"}[meta[4]]
		if kind == "modified" && meta[2] == meta[3] {
			kind = "mode"
		}
		changes = append(changes, Change{Path: f[1], Kind: kind})
	}
	return changes, err
}

// Diff is a unified diff between the same two states as Changes, cut at max
// bytes (said so at the cut). Binary files are named, not shown.
func (s *Store) Diff(ctx context.Context, workspace, from, to string, max int) (string, error) {
	out, err := s.compare(ctx, workspace, from, to, "-p", "--no-color", "--no-ext-diff", "--no-textconv")
	if len(out) > max {
		out = out[:max] + fmt.Sprintf("\n[diff cut at %d of %d bytes]\n", max, len(out))
	}
	return out, err
}

// Restore makes workspace's recorded files equal to checkpoint id: writes
// id's paths, deletes those recorded now but not in id (ignored and oversize
// files are not), links as links, modes, new and removed directories. It
// never writes through a symlink: git replaces one on a path's way.
func (s *Store) Restore(ctx context.Context, workspace, id string) error {
	return s.locked(func() error {
		err := s.known(ctx, id)
		if err == nil {
			_, _, err = s.snapshot(ctx, workspace)
		}
		if err == nil {
			_, err = s.git(ctx, workspace, "", "read-tree", "--reset", "-u", id)
		}
		return err
	})
}

// RestoreTo writes checkpoint id's files into dir, another directory than
// the session's workspace (a fork's), as Restore does; through an index of
// its own, so the store's record of the workspace stays as it was.
func (s *Store) RestoreTo(ctx context.Context, dir, id string) error {
	t := *s
	t.index = filepath.Join(s.dir, "index-restore")
	defer os.Remove(t.index)
	return t.Restore(ctx, dir, id)
}

// compare diffs from and to (to == "": the workspace recorded now).
func (s *Store) compare(ctx context.Context, workspace, from, to string, args ...string) (out string, err error) {
	err = s.locked(func() error {
		err := s.known(ctx, from)
		if err == nil && to == "" {
			to, _, err = s.snapshot(ctx, workspace)
		} else if err == nil {
			err = s.known(ctx, to)
		}
		if err == nil {
			out, err = s.git(ctx, workspace, "", append(append([]string{"diff-tree", "-r", "--no-renames"}, args...), from, to, "--")...)
		}
		return err
	})
	return out, err
}

// snapshot records workspace into the index and writes its tree, returning
// what it left out; an unchanged workspace costs git's one stat walk.
func (s *Store) snapshot(ctx context.Context, workspace string) (string, []string, error) {
	if fi, err := os.Stat(workspace); err != nil || !fi.IsDir() {
		return "", nil, fmt.Errorf("checkpoint: workspace %s is not a directory", workspace)
	}
	// A data dir (the store's grandparent) inside the workspace is never
	// recorded: it holds this store, credentials and every session.
	exclude := ""
	if rel, err := filepath.Rel(workspace, filepath.Dir(filepath.Dir(s.dir))); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		exclude = "/" + strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(filepath.ToSlash(rel)) + "/\n"
	}
	if err := os.WriteFile(filepath.Join(s.dir, "git", "info", "exclude"), []byte(exclude), 0o600); err != nil {
		return "", nil, fmt.Errorf("checkpoint store: %w", err)
	}
	out, err := s.git(ctx, workspace, "", "ls-files", "-z", "-t", "--others", "--modified", "--exclude-standard")
	var skipped []string
	var add, drop, all strings.Builder
	all.WriteString(".\x00")
	for _, e := range strings.Split(out, "\x00") {
		if len(e) < 3 {
			continue
		}
		path := e[2:]
		fi, err := os.Lstat(filepath.Join(workspace, path))
		big := err == nil && fi.Mode().IsRegular() && fi.Size() > s.lim.MaxFileBytes
		// A nested repository ("dir/") would be its HEAD, read through a
		// .git the model wrote.
		if big || strings.HasSuffix(path, "/") {
			skipped = append(skipped, path)
			all.WriteString(":(exclude,literal)" + path + "\x00")
			if e[0] != '?' { // tracked: forget it; untracked: leave it out
				drop.WriteString(path + "\x00")
			}
		} else {
			add.WriteString(":(literal)" + path + "\x00")
		}
	}
	if err == nil && drop.Len() > 0 {
		_, err = s.git(ctx, workspace, drop.String(), "update-index", "-z", "--force-remove", "--stdin")
	}
	// Git matches each path against each pathspec, so many paths are one
	// walk of the tree, as is a path git refuses (beyond what became a link).
	spec := add.String()
	if strings.Count(spec, "\x00") > 1000 {
		spec = all.String()
	}
	if err == nil && spec != "" {
		if _, err = s.git(ctx, workspace, spec, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil && spec != all.String() {
			_, err = s.git(ctx, workspace, all.String(), "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul")
		}
	}
	if err != nil {
		return "", nil, err
	}
	tree, err := s.git(ctx, workspace, "", "write-tree")
	sort.Strings(skipped)
	return strings.TrimSpace(tree), skipped, err
}

// prune drops the oldest refs past KeepCount; when sized and over KeepBytes,
// the oldest quarter (never the newest) and their objects, else gc --auto.
func (s *Store) prune(ctx context.Context, refs []string, sized bool) error {
	drop := func(n int) error {
		var in strings.Builder
		for _, r := range refs[:n] {
			in.WriteString("delete " + refPrefix + r + "\n")
		}
		refs = refs[n:]
		_, err := s.git(ctx, s.dir, in.String(), "update-ref", "--stdin")
		return err
	}
	if n := len(refs) - s.lim.KeepCount; n > 0 {
		if err := drop(n); err != nil {
			return err
		}
	}
	for sized {
		out, err := s.git(ctx, s.dir, "", "count-objects", "-v")
		var size int64
		for _, l := range strings.Split(out, "\n") {
			if k, v, _ := strings.Cut(l, ": "); strings.HasPrefix(k, "size") { // size, size-pack, size-garbage
				n, _ := strconv.ParseInt(v, 10, 64)
				size += n << 10
			}
		}
		if err != nil || size <= s.lim.KeepBytes || len(refs) <= 1 {
			if err == nil {
				_, err = s.git(ctx, s.dir, "", "gc", "--auto", "-q")
			}
			return err
		}
		if err = drop(max(1, min(len(refs)/4, len(refs)-1))); err == nil {
			_, err = s.git(ctx, s.dir, "", "gc", "-q", "--force", "--prune=now")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// known checks that id is a checkpoint of this store.
func (s *Store) known(ctx context.Context, id string) error {
	list, err := s.List(ctx)
	for _, c := range list {
		if c.ID == id {
			return nil
		}
	}
	return cmp.Or(err, fmt.Errorf("checkpoint %q: not a checkpoint of this session", id))
}

// locked runs fn holding the store's lock (package doc).
func (s *Store) locked(fn func() error) error {
	lock := flock.New(filepath.Join(s.dir, "lock"), flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("checkpoint store lock: %w", err)
	}
	defer lock.Unlock()
	stale, _ := filepath.Glob(filepath.Join(s.dir, "git", refPrefix, "*.lock"))
	for _, p := range append(stale, s.index+".lock") {
		os.Remove(p)
	}
	return fn()
}

// config comes before every git command, over the store's own config (no
// system or global one is read; docs/security.md says why each is there).
var config = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false",
	"-c", "core.attributesFile=/dev/null", "-c", "core.excludesFile=/dev/null", "-c", "core.autocrlf=false",
	"-c", "core.symlinks=true", "-c", "core.quotePath=false", "-c", "gc.packRefs=false", "-c", "gc.autoDetach=true",
	"-c", "protocol.allow=never"}

// git runs git on the store with workspace as its work tree, in an
// environment of its own; a failure is one line.
func (s *Store) git(ctx context.Context, workspace, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append(config[:len(config):len(config)], args...)...)
	cmd.Dir, cmd.Stdin, cmd.WaitDelay, cmd.SysProcAttr = workspace, strings.NewReader(stdin), time.Second, procAttr()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "LC_ALL=C",
		"GIT_DIR=" + filepath.Join(s.dir, "git"), "GIT_WORK_TREE=" + workspace, "GIT_INDEX_FILE=" + s.index,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_AUTHOR_NAME=checkpoint", "GIT_AUTHOR_EMAIL=checkpoint@durable-agent",
		"GIT_COMMITTER_NAME=checkpoint", "GIT_COMMITTER_EMAIL=checkpoint@durable-agent"}
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(errb.String()), "\n")
		if err = cmp.Or(ctx.Err(), err); msg != "" {
			err = fmt.Errorf("%s (%w)", msg, err)
		}
		return "", fmt.Errorf("checkpoint: git %s: %w", args[0], err)
	}
	return string(out), nil
}
