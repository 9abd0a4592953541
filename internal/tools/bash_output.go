package tools

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
)

// tailCap is how much of the end of a command's output is kept in memory;
// twice the byte limit, so the last MaxBytes are always whole lines plus the
// line they start in.
const tailCap = 2 * MaxBytes

// KeptOutputFiles and KeptOutputBytes bound the full outputs of truncated
// commands kept in one Options.TempDir (the worker gives each session its
// own): after each new one, the oldest are removed until at most
// KeptOutputFiles of them, of at most KeptOutputBytes in all, remain. A
// single full output is cut at KeptOutputBytes (its start is kept; the
// result shows its end).
const (
	KeptOutputFiles = 20
	KeptOutputBytes = 32 << 20
)

// writingOutputs holds the paths of the full outputs this process is
// still writing: a concurrent call's pruning leaves them alone.
var writingOutputs sync.Map

// outputAcc accumulates a command's output: the tail in memory and, once the
// output is over the limits, everything in a file under dir (up to
// KeptOutputBytes), a directory relative to root that is made, written and
// pruned through root's os.Root: a link a command planted on the way
// (dir itself, a parent, the file) is not followed out of root.
type outputAcc struct {
	mu       sync.Mutex
	root     string
	dir      string
	fsys     *os.Root // open from openFile to finish
	written  int      // bytes in the file
	cutFile  bool     // the file stopped at KeptOutputBytes
	tail     []byte
	cut      bool // tail has lost the beginning of the output
	total    int
	newlines int
	lastByte byte
	file     *os.File
	path     string
	fileErr  error
	dirty    bool
}

// Write takes the next piece of output; it does not fail (a full-output
// file that cannot be written is reported by finish).
func (a *outputAcc) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total += len(p)
	a.newlines += bytes.Count(p, []byte{'\n'})
	a.lastByte = p[len(p)-1]
	if a.file == nil && a.fileErr == nil && (a.total > MaxBytes || a.newlines > MaxLines) {
		// Until now the tail held the whole output.
		a.openFile()
	}
	if a.file != nil {
		a.writeFile(p)
	}
	a.tail = append(a.tail, p...)
	if len(a.tail) > tailCap {
		n := copy(a.tail, a.tail[len(a.tail)-tailCap:])
		a.tail = a.tail[:n]
		a.cut = true
	}
	a.dirty = true
	return len(p), nil
}

func (a *outputAcc) openFile() {
	a.fsys, a.fileErr = os.OpenRoot(a.root)
	if a.fileErr != nil {
		return
	}
	name := filepath.Join(a.dir, outputPrefix+rand.Text()+outputSuffix)
	err := a.fsys.MkdirAll(a.dir, 0o700)
	var f *os.File
	if err == nil {
		f, err = a.fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	}
	dir := filepath.Join(a.root, a.dir)
	switch {
	case errors.Is(err, fs.ErrExist): // a file, a FIFO, a dangling link: not made by MkdirAll
		a.fileErr = fmt.Errorf("%s is not a directory", dir)
		return
	case err != nil:
		a.fileErr = outsideErr(dir, err)
		return
	}
	a.file, a.path = f, filepath.Join(a.root, name)
	writingOutputs.Store(a.path, true)
	a.writeFile(a.tail)
}

// writeFile appends p to the full output, up to KeptOutputBytes.
func (a *outputAcc) writeFile(p []byte) {
	if room := KeptOutputBytes - a.written; len(p) > room {
		p = p[:room]
		a.cutFile = true
	}
	if len(p) == 0 {
		return
	}
	n, err := a.file.Write(p)
	a.written += n
	if err != nil {
		a.fileErr = err
		a.file.Close()
		a.file = nil
	}
}

// lines is the number of lines of the output (a final newline does not
// start a line).
func (a *outputAcc) lines() int {
	switch {
	case a.total == 0:
		return 0
	case a.lastByte == '\n':
		return a.newlines
	}
	return a.newlines + 1
}

// render truncates the tail to the limits.
func (a *outputAcc) render() truncation {
	s := string(a.tail)
	if a.cut {
		// Drop the partial first line, unless it is the only one.
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	s = strings.TrimSuffix(sanitizeOutput(s), "\n")
	return truncateTail(s, MaxLines, MaxBytes)
}

// snapshot returns the current tail when there is new output since the last
// snapshot.
func (a *outputAcc) snapshot() (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.dirty {
		return "", false
	}
	a.dirty = false
	return a.render().content, true
}

type finishedOutput struct {
	text      string // the tail, with the truncation notice
	truncated bool
	path      string // the full output, when truncated
}

// finish closes the full-output file and renders the final text.
func (a *outputAcc) finish() finishedOutput {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.file != nil {
		if err := a.file.Close(); err != nil && a.fileErr == nil {
			a.fileErr = err
		}
		a.file = nil
	}
	if a.path != "" {
		defer writingOutputs.Delete(a.path)
	}
	if a.fsys != nil {
		defer a.fsys.Close()
	}
	tr := a.render()
	total := a.lines()
	truncated := tr.truncated || a.cut || total > MaxLines
	if !truncated {
		if a.path != "" {
			a.fsys.Remove(a.rel(a.path))
		}
		return finishedOutput{text: tr.content}
	}
	where := "Full output: " + a.path
	if a.cutFile {
		where = fmt.Sprintf("Full output (cut at %s): %s", formatSize(KeptOutputBytes), a.path)
	}
	if a.path != "" {
		a.prune()
	}
	if a.fileErr != nil || a.path == "" {
		where = fmt.Sprintf("Full output could not be saved: %v", a.fileErr)
		a.path = ""
	}
	var notice string
	switch {
	case tr.lastLinePartial:
		notice = fmt.Sprintf("[Showing last %s of line %d (line is %s). %s]",
			formatSize(tr.outBytes), total, formatSize(lastLineBytes(a.tail)), where)
	case tr.byBytes:
		notice = fmt.Sprintf("[Showing last %d lines of %d (%s limit). %s]", tr.outLines, total, formatSize(MaxBytes), where)
	default:
		notice = fmt.Sprintf("[Showing last %d lines of %d. %s]", tr.outLines, total, where)
	}
	return finishedOutput{text: tr.content + "\n\n" + notice, truncated: true, path: a.path}
}

// lastLineBytes is the size of the last line in b, as far as b reaches.
func lastLineBytes(b []byte) int {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return len(b) - (bytes.LastIndexByte(b, '\n') + 1)
}

// sanitizeOutput makes command output fit for the model: valid UTF-8, no
// ANSI escape sequences, LF line endings, no other control characters
// (tabs, newlines and carriage returns stay).
func sanitizeOutput(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsFunc(s, func(r rune) bool { return r == '\r' || dropControl(r) }) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if dropControl(r) {
			return -1
		}
		return r
	}, strings.ReplaceAll(ansi.Strip(s), "\r\n", "\n"))
}

// dropControl reports whether sanitizeOutput drops r.
func dropControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' && r != '\r' || r == 0x7f
}
