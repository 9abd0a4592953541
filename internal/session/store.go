package session

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/durableagent/durableagent/agent"
)

// ErrPermanent is wrapped by errors about a session file that retrying
// cannot fix: a first line that is not a session header, a format version
// newer than this build reads, or a directory (or other non-regular file)
// where the session file should be. Check it with errors.Is.
var ErrPermanent = errors.New("permanent session file error")

// permanentError is an error that matches ErrPermanent without adding
// its text to the message.
type permanentError struct{ err error }

func (e *permanentError) Error() string        { return e.err.Error() }
func (e *permanentError) Unwrap() error        { return e.err }
func (e *permanentError) Is(target error) bool { return target == ErrPermanent }

func permanentf(format string, args ...any) error {
	return &permanentError{fmt.Errorf(format, args...)}
}

// checkRegular refuses a session file that is not a regular file: a
// directory cannot be read or appended to, and opening a FIFO would hang.
func checkRegular(path string, fi os.FileInfo) error {
	switch {
	case fi.Mode().IsRegular():
		return nil
	case fi.IsDir():
		return permanentf("%s is a directory, not a session file", path)
	default:
		return permanentf("%s is not a regular file (%s), not a session file", path, fi.Mode().Type())
	}
}

// statRegular checks the session file at path before it is opened; a
// missing file is left to the open.
func statRegular(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return checkRegular(path, fi)
}

// maxCachedSessions bounds the memory a long-running worker spends on
// sessions it no longer serves; an evicted session is simply read again.
const maxCachedSessions = 64

// Store reads and appends session files in one directory. It is safe for
// concurrent use by goroutines, and several processes may use the same
// directory at once.
type Store struct {
	dir string

	mu     sync.Mutex
	caches map[string]*sessionCache
	clock  uint64 // use counter for eviction
}

// Open returns a Store for dir (normally <dataDir>/sessions), creating the
// directory with mode 0700 if it is missing: sessions hold whole
// conversations and are nobody else's business.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("open session store: empty directory path")
	}
	// MkdirAll fails with "not a directory" when dir is a file.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open session store: %w", err)
	}
	return &Store{dir: dir, caches: make(map[string]*sessionCache)}, nil
}

// Path returns the file of a session: <dir>/<sessionID>.jsonl. It does not
// validate the id; Append and Load do.
func (s *Store) Path(sessionID string) string {
	return filepath.Join(s.dir, sessionID+".jsonl")
}

// List returns the ids of the sessions in the store, sorted. Files whose
// names are not <valid id>.jsonl are not sessions and are left out.
func (s *Store) List() ([]string, error) {
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var ids []string
	for _, de := range des {
		id, ok := strings.CutSuffix(de.Name(), ".jsonl")
		if !ok || !de.Type().IsRegular() || ValidateID(id) != nil {
			continue
		}
		ids = append(ids, id)
	}
	// Sort the ids, not the file names: "a-b.jsonl" sorts before
	// "a.jsonl" but "a" before "a-b".
	slices.Sort(ids)
	return ids, nil
}

// Append writes the entries that are not yet in the session and returns how
// many it wrote. The first entry with a given id wins: an id already in the
// file is skipped (this is what makes a re-run activity harmless), and so is
// a repeat of an id earlier in the same call. Append creates the file (mode
// 0600, with a header) if it is missing, even for zero entries.
//
// All lines go out in one write and are fsynced before Append returns. An
// incomplete last line left by an earlier crash (bytes after the last line
// break that are not valid JSON) is truncated away first; a last line that
// is valid JSON but lacks its newline is complete and kept, and gets the
// newline before the new lines. If
// the write or the fsync fails, the file is truncated back to where it was,
// so a failed Append leaves nothing behind and can simply be retried.
func (s *Store) Append(sessionID string, entries ...Entry) (written int, err error) {
	// Validate and encode before touching the file, so that a bad entry
	// leaves no trace (not even an empty file) and the lock is held briefly.
	lines, err := EncodeEntries(sessionID, entries)
	if err != nil {
		return 0, err
	}
	n, _, err := s.append(sessionID, entries, lines, Header{})
	if err != nil {
		return 0, fmt.Errorf("append to session %q: %w", sessionID, err)
	}
	return n, nil
}

// Init creates the session if it has no file yet, recording where's Cwd
// (the session's workspace), Host (the worker host that holds it, "" for
// any), Worktree and ParentSession in its header (its other fields are the
// store's), and returns the header in force: a session's workspace is
// fixed when it is created, so an existing session keeps the header it was
// created with.
func (s *Store) Init(sessionID string, where Header) (Header, error) {
	if err := ValidateID(sessionID); err != nil {
		return Header{}, fmt.Errorf("init session: %w", err)
	}
	_, h, err := s.append(sessionID, nil, nil, where)
	if err != nil {
		return Header{}, fmt.Errorf("init session %q: %w", sessionID, err)
	}
	if h.ID == "" { // the cache was dropped after the write: read it back
		sess, err := s.Load(sessionID)
		if err != nil {
			return Header{}, fmt.Errorf("init session %q: %w", sessionID, err)
		}
		h = sess.Header
	}
	return h, nil
}

// encodeLine renders v as one JSON line (agent.MarshalPlain and a line
// break). JSON strings escape newlines, so a line is always exactly one
// value.
func encodeLine(v any) ([]byte, error) {
	b, err := agent.MarshalPlain(v)
	return append(b, '\n'), err
}

// append writes lines[i] (EncodeEntries', without the newline) for each
// entries[i] whose id is new. A new file gets a header with where's cwd,
// host and worktree. It returns the file's header.
func (s *Store) append(id string, entries []Entry, lines [][]byte, where Header) (int, Header, error) {
	c := s.cacheFor(id)
	c.mu.Lock()
	defer c.mu.Unlock()

	path := s.Path(id)
	if err := statRegular(path); err != nil {
		return 0, Header{}, err
	}
	// An exclusive flock(2) on the file (a descriptor of its own, made
	// 0600 when the file is new), waited for; the caller names the session.
	lock := flock.New(path)
	if err := lock.Lock(); err != nil {
		return 0, Header{}, err
	}
	defer lock.Close()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, Header{}, err
	}
	defer f.Close()
	if err := c.sync(f); err != nil {
		return 0, Header{}, err
	}

	// Without a complete header line the file is new, or its first write was
	// torn: nothing in it was ever acknowledged, so start it over. (A file
	// that begins with a valid header always has c.lines > 0, or sync has
	// refused it.)
	fresh := c.lines == 0
	at := c.parsed
	var buf bytes.Buffer
	if fresh {
		at = 0
		h, err := encodeLine(Header{Type: HeaderType, Version: FormatVersion, ID: id, Timestamp: time.Now().UTC(), Cwd: where.Cwd, Host: where.Host, Worktree: where.Worktree, ParentSession: where.ParentSession})
		if err != nil {
			return 0, Header{}, fmt.Errorf("encode header: %w", err)
		}
		buf.Write(h)
	}
	seen := make(map[string]bool, len(entries))
	written := 0
	for i, e := range entries {
		if _, done := c.ids[e.ID]; done || seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		if written == 0 && !fresh && c.lastByte != '\n' && c.lastByte != '\r' {
			// The last line is complete but has no newline: add it.
			buf.WriteByte('\n')
		}
		buf.Write(lines[i])
		buf.WriteByte('\n')
		written++
	}

	if c.size > at {
		// Repair a torn tail even when there is nothing new to write, so
		// that readers stop warning about it.
		if err := f.Truncate(at); err != nil {
			c.reset()
			return 0, Header{}, fmt.Errorf("truncate incomplete last line of %s: %w", f.Name(), err)
		}
	}
	if buf.Len() > 0 {
		if err := writeSynced(f, buf.Bytes(), at); err != nil {
			c.reset()
			return 0, Header{}, err
		}
		if fresh {
			// Make the new directory entry durable too.
			if err := syncDir(s.dir); err != nil {
				c.reset()
				return 0, Header{}, err
			}
		}
	}
	if c.size > at || buf.Len() > 0 {
		// The cache reads the change as it reads any (so its entries are
		// exactly a fresh Load's). A failure resets it, to be read again
		// next time: the data is on disk, only the cache is in doubt.
		_ = c.sync(f)
	}
	return written, c.header, nil
}

// writeSynced writes b at offset at and fsyncs. On failure it truncates the
// file back to at, so that no partial line survives an error the caller saw.
func writeSynced(f *os.File, b []byte, at int64) error {
	_, err := f.WriteAt(b, at)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		// The *PathError of WriteAt and Sync names the file too: name it
		// once ("write F: no space left on device").
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == f.Name() {
			if pe.Op == "write" {
				err = pe.Err
			} else {
				err = fmt.Errorf("%s: %w", pe.Op, pe.Err)
			}
		}
		if terr := f.Truncate(at); terr != nil {
			return fmt.Errorf("write %s: %w (and rolling back failed: %v)", f.Name(), err, terr)
		}
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// Load reads a session. A missing file (or one whose very first write was
// torn) gives ErrNotFound wrapped with the id; a first line that is not a
// session header, a newer format version or a directory in the file's
// place gives an error wrapping ErrPermanent. Bad entry lines and an
// incomplete last line do not: they are skipped and described in
// Session.Warnings, one warning naming the line each. Lines may end with
// "\n", "\r\n" or "\r"; a last line without a line break counts if it
// is valid JSON.
//
// The returned Session is the caller's, but the Messages its entries point
// to are shared with the store's cache and must be treated as read-only.
func (s *Store) Load(sessionID string) (*Session, error) {
	if err := ValidateID(sessionID); err != nil {
		return nil, fmt.Errorf("load session: %w", err)
	}
	c := s.cacheFor(sessionID)
	c.mu.Lock()
	defer c.mu.Unlock()

	path := s.Path(sessionID)
	if err := statRegular(path); err != nil {
		return nil, fmt.Errorf("load session %q: %w", sessionID, err)
	}
	// A shared flock(2) on the file, waited for; then the file, which a
	// Delete that held the lock may have removed.
	lock := flock.New(path, flock.SetFlag(os.O_RDONLY))
	err := lock.RLock()
	var f *os.File
	if err == nil {
		defer lock.Close()
		f, err = os.Open(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		c.reset()
		s.forget(sessionID, c)
		return nil, fmt.Errorf("load session %q: %w", sessionID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load session %q: %w", sessionID, err)
	}
	defer f.Close()
	if err := c.sync(f); err != nil {
		return nil, fmt.Errorf("load session %q: %w", sessionID, err)
	}
	if c.lines == 0 {
		return nil, fmt.Errorf("load session %q: %w (%s has no complete header line)", sessionID, ErrNotFound, f.Name())
	}
	return c.snapshot(), nil
}

// cacheFor returns the cache of a session, creating it and evicting the
// least recently used one beyond maxCachedSessions. An evicted cache may
// still be in use by a goroutine; that is harmless because every operation
// revalidates its cache against the locked file.
func (s *Store) cacheFor(id string) *sessionCache {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock++
	if c, ok := s.caches[id]; ok {
		c.lastUse = s.clock
		return c
	}
	if len(s.caches) >= maxCachedSessions {
		var oldest *sessionCache
		for _, c := range s.caches {
			if oldest == nil || c.lastUse < oldest.lastUse {
				oldest = c
			}
		}
		delete(s.caches, oldest.id)
	}
	c := &sessionCache{id: id, lastUse: s.clock}
	c.reset()
	s.caches[id] = c
	return c
}

// forget drops the cache of a session whose file is gone.
func (s *Store) forget(id string, c *sessionCache) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.caches[id] == c {
		delete(s.caches, id)
	}
}
