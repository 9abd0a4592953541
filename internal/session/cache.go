package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// sessionCache is what a Store knows about one session file. Its mutex
// serialises the goroutines of one process; the file lock (held by the
// caller of sync) serialises processes.
type sessionCache struct {
	mu sync.Mutex
	id string
	// lastUse orders caches for eviction; guarded by Store.mu.
	lastUse uint64

	valid   bool
	info    os.FileInfo // identity of the file read (os.SameFile)
	size    int64       // file size when last read, torn tail included
	modTime time.Time   // modification time when last read
	parsed  int64       // offset just past the last complete line
	lines   int         // complete lines consumed, header included

	header     Header
	headerLine []byte // exact bytes of line 1, to detect a replaced file
	entries    []Entry
	ids        map[string]struct{}
	warnings   []string // skipped complete lines, permanent
	tail       string   // warning about an incomplete last line, if any

	// bytesRead counts the file bytes parsed by sync, so tests can tell an
	// incremental read from a full one.
	bytesRead int64
}

// reset forgets everything read so far.
func (c *sessionCache) reset() {
	c.valid = false
	c.info = nil
	c.size, c.parsed, c.lines = 0, 0, 0
	c.modTime = time.Time{}
	c.header = Header{}
	c.headerLine = nil
	c.entries = nil
	c.ids = make(map[string]struct{})
	c.warnings = nil
	c.tail = ""
}

// sync brings the cache up to date with f, which the caller has opened and
// locked. It reads only the bytes after the last complete line when the file
// merely grew, and everything when it shrank, was replaced or was modified
// without growing.
func (c *sessionCache) sync(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		c.reset()
		return fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	full := !c.valid || !os.SameFile(c.info, fi) || fi.Size() < c.size ||
		(fi.Size() == c.size && !fi.ModTime().Equal(c.modTime))
	if !full {
		intact, err := c.prefixIntact(f)
		if err != nil {
			c.reset()
			return err
		}
		full = !intact
	}
	if full {
		c.reset()
	}
	start := c.parsed
	if n := fi.Size() - start; n > 0 {
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			c.reset()
			return fmt.Errorf("read %s: %w", f.Name(), err)
		}
		c.bytesRead += n
		if err := c.consume(buf); err != nil {
			c.reset()
			return fmt.Errorf("read %s: %w", f.Name(), err)
		}
	} else {
		c.tail = ""
	}
	c.valid = true
	c.info = fi
	c.size = fi.Size()
	c.modTime = fi.ModTime()
	return nil
}

// prefixIntact checks, cheaply, that the bytes already parsed are still the
// ones read: same header line (it holds the id and a creation timestamp, so
// a re-created file differs) and a newline where the last parsed line ended.
// Size and modification time alone miss a file deleted and re-created with
// the same inode number.
func (c *sessionCache) prefixIntact(f *os.File) (bool, error) {
	if c.parsed == 0 {
		return true, nil
	}
	got := make([]byte, len(c.headerLine))
	if _, err := f.ReadAt(got, 0); err != nil {
		if err == io.EOF {
			return false, nil
		}
		return false, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	if !bytes.Equal(got, c.headerLine) {
		return false, nil
	}
	var nl [1]byte
	if _, err := f.ReadAt(nl[:], c.parsed-1); err != nil {
		if err == io.EOF {
			return false, nil
		}
		return false, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return nl[0] == '\n', nil
}

// consume parses data, the file's bytes from offset c.parsed on. Complete
// lines advance c.parsed; bytes after the last newline are an incomplete
// (torn) line left by a crash and are reported in c.tail, not parsed.
func (c *sessionCache) consume(data []byte) error {
	c.tail = ""
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			c.tail = fmt.Sprintf("line %d: incomplete last line (%d bytes without a newline, left by an interrupted write), ignored",
				c.lines+1, len(data))
			return nil
		}
		line := data[:i+1]
		data = data[i+1:]
		if c.lines == 0 {
			if err := c.readHeader(line); err != nil {
				return err
			}
		} else {
			c.readEntry(c.lines+1, line)
		}
		c.lines++
		c.parsed += int64(len(line))
	}
	return nil
}

func (c *sessionCache) readHeader(line []byte) error {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil || h.Type != HeaderType {
		return fmt.Errorf("line 1 is not a session header (want a JSON object with \"type\":%q)", HeaderType)
	}
	if h.Version < 1 || h.Version > FormatVersion {
		return fmt.Errorf("session header has format version %d, this build reads 1 to %d", h.Version, FormatVersion)
	}
	if h.ID != c.id {
		c.warnings = append(c.warnings, fmt.Sprintf("line 1: header id %q differs from session id %q", h.ID, c.id))
	}
	c.header = h
	c.headerLine = bytes.Clone(line)
	return nil
}

// readEntry parses one complete line. A bad line is skipped with a warning:
// losing one line must never make the rest of a session unreadable.
func (c *sessionCache) readEntry(lineNo int, line []byte) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return
	}
	var e Entry
	if err := json.Unmarshal(trimmed, &e); err != nil {
		c.warnings = append(c.warnings, fmt.Sprintf("line %d: not JSON, skipped", lineNo))
		return
	}
	if err := checkLoaded(e); err != nil {
		c.warnings = append(c.warnings, fmt.Sprintf("line %d: %v, skipped", lineNo, err))
		return
	}
	if _, dup := c.ids[e.ID]; dup {
		c.warnings = append(c.warnings, fmt.Sprintf("line %d: duplicate entry id %q, skipped (the first one counts)", lineNo, e.ID))
		return
	}
	c.ids[e.ID] = struct{}{}
	c.entries = append(c.entries, e)
}

// snapshot returns a Session that shares no mutable state with the cache:
// the cache only ever appends, but a caller may assign to Entries[i].
func (c *sessionCache) snapshot() *Session {
	s := &Session{
		Header:  c.header,
		Entries: append([]Entry(nil), c.entries...),
		idx:     &entryIndex{},
	}
	if len(c.warnings) > 0 || c.tail != "" {
		s.Warnings = append([]string(nil), c.warnings...)
		if c.tail != "" {
			s.Warnings = append(s.Warnings, c.tail)
		}
	}
	return s
}
