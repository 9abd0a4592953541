package session

import (
	"bytes"
	"encoding/json"
	"errors"
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
	// bytesRead counts the file bytes parsed by sync, so tests can tell an
	// incremental read from a full one.
	bytesRead int64
	fileRead
}

// fileRead is what was read of the file, all of which reset forgets.
type fileRead struct {
	valid   bool
	info    os.FileInfo // identity of the file read (os.SameFile)
	size    int64       // file size when last read, torn tail included
	modTime time.Time   // modification time when last read
	parsed  int64       // offset just past the last complete line
	lines   int         // complete lines consumed, header included
	// lastByte is the last byte of the last complete line: its line
	// break, or the line itself when it has none.
	lastByte byte

	header     Header
	headerLine []byte // exact bytes of line 1, to detect a replaced file
	entries    []Entry
	ids        map[string]struct{}
	warnings   []string // skipped complete lines, permanent
	tail       string   // warning about an incomplete last line, if any
}

// reset forgets everything read so far.
func (c *sessionCache) reset() { c.fileRead = fileRead{ids: map[string]struct{}{}} }

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
	if err := checkRegular(f.Name(), fi); err != nil {
		c.reset()
		return err
	}
	full := !c.valid || !os.SameFile(c.info, fi) || fi.Size() < c.size ||
		(fi.Size() == c.size && !fi.ModTime().Equal(c.modTime))
	if !full {
		intact, err := c.prefixIntact(f)
		if err != nil {
			c.reset()
			return err
		}
		// New bytes continue the parsed ones only after a "\n" (see consume).
		full = !intact || fi.Size() > c.size && c.lastByte != '\n'
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
			return fmt.Errorf("%s: %w", f.Name(), err)
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
// a re-created file differs) and the same byte where the last parsed line
// ended. Size and modification time alone miss a file deleted and
// re-created with the same inode number.
func (c *sessionCache) prefixIntact(f *os.File) (bool, error) {
	if c.parsed == 0 {
		return true, nil
	}
	got := make([]byte, len(c.headerLine)+1)
	_, err := f.ReadAt(got[:len(c.headerLine)], 0)
	if err == nil {
		_, err = f.ReadAt(got[len(c.headerLine):], c.parsed-1)
	}
	switch {
	case err == io.EOF:
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return bytes.Equal(got, append(bytes.Clone(c.headerLine), c.lastByte)), nil
}

// consume parses data, the file's bytes from offset c.parsed on, which is
// the start of a line. Lines end with "\n", "\r\n" or a lone "\r".
// Complete lines advance c.parsed. The bytes after the last line break are
// a complete last line if they parse as JSON (a file whose writer left out
// the final newline); otherwise they are an incomplete (torn) line left by
// a crash, reported in c.tail and not parsed. When the last line does not
// end in "\n" (no line break, or a "\r" a "\n" may follow), sync reads a
// file that grew from the start.
func (c *sessionCache) consume(data []byte) error {
	c.tail = ""
	for len(data) > 0 {
		brk := bytes.IndexAny(data, "\r\n")
		if brk < 0 {
			return c.lastLine(data)
		}
		next := brk + 1
		if data[brk] == '\r' && next < len(data) && data[next] == '\n' {
			next++
		}
		if err := c.line(data[:brk], data[:next]); err != nil {
			return err
		}
		data = data[next:]
	}
	return nil
}

// line consumes one line: text without its line break, raw with it.
func (c *sessionCache) line(text, raw []byte) error {
	if c.lines == 0 {
		if err := c.readHeader(text, raw); err != nil {
			return err
		}
	} else {
		c.readEntry(c.lines+1, text)
	}
	c.lines++
	c.parsed += int64(len(raw))
	c.lastByte = raw[len(raw)-1]
	return nil
}

// lastLine handles the bytes after the last line break.
func (c *sessionCache) lastLine(rest []byte) error {
	if json.Valid(bytes.TrimSpace(rest)) {
		// A complete value: the line is whole, only its newline is missing.
		return c.line(rest, rest)
	}
	if n := headerLen(rest); c.lines == 0 && n > 0 {
		// Never mistake a session for a torn first write and start it over.
		return permanentf("line 1 is a session header followed by %d bytes that are neither JSON nor a line break; repair the file by hand",
			len(rest)-n)
	}
	c.tail = fmt.Sprintf("line %d: incomplete last line (%d bytes without a newline that are not valid JSON, left by an interrupted write), ignored",
		c.lines+1, len(rest))
	return nil
}

// headerLen is the length of the session header b begins with, 0 if none.
func headerLen(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	var h Header
	if err := dec.Decode(&h); err != nil || h.Type != HeaderType {
		return 0
	}
	return int(dec.InputOffset())
}

// NewerFormat is the error for a session of format version v, newer than
// this build reads: permanent (ErrPermanent), whichever store holds it.
func NewerFormat(v int) error {
	return permanentf("session header has format version %d, newer than this build reads (up to %d)", v, FormatVersion)
}

func (c *sessionCache) readHeader(text, raw []byte) error {
	h, _, err := DecodeExportHeader(text)
	if err != nil {
		return &permanentError{err}
	}
	switch {
	case h.Version > FormatVersion:
		return NewerFormat(h.Version)
	case h.Version < 1:
		return permanentf("session header has format version %d, want 1 to %d", h.Version, FormatVersion)
	}
	if h.ID != c.id {
		c.warnings = append(c.warnings, fmt.Sprintf("line 1: header id %q differs from session id %q", h.ID, c.id))
	}
	c.header = h
	c.headerLine = bytes.Clone(raw)
	return nil
}

// readEntry parses one complete line. A bad line is skipped with a warning:
// losing one line must never make the rest of a session unreadable.
func (c *sessionCache) readEntry(lineNo int, line []byte) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return
	}
	e, err := DecodeEntry(trimmed)
	if err != nil {
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

// describeJSONError says why a line is not an entry.
func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fmt.Sprintf("a JSON %s, not an entry object", te.Value)
		}
		return fmt.Sprintf("field %q has the wrong type (a JSON %s, want %s)", te.Field, te.Value, te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "not JSON"
	}
	return fmt.Sprintf("not a valid entry (%v)", err)
}

// snapshot returns a Session that shares no mutable state with the cache:
// the cache only ever appends, but a caller may assign to Entries[i].
func (c *sessionCache) snapshot() *Session {
	s := &Session{
		Header:  c.header,
		Entries: append([]Entry(nil), c.entries...),
	}
	if len(c.warnings) > 0 || c.tail != "" {
		s.Warnings = append([]string(nil), c.warnings...)
		if c.tail != "" {
			s.Warnings = append(s.Warnings, c.tail)
		}
	}
	return s
}
