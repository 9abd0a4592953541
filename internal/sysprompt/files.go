package sysprompt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/durableagent/durableagent/internal/tools"
)

// Bounds of the project files in the system prompt: every model call
// sends the whole text, so a huge file must not ride along in full.
const (
	MaxFileBytes    = 32 << 10
	MaxProjectBytes = 64 << 10
)

// InstructionFiles are the names of the project instruction files read in
// each directory, in the order they are read.
var InstructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

// File is one project instruction file as it goes into the prompt.
type File struct {
	// Path is the file's absolute path.
	Path string
	// Text is its content, cut at the bounds.
	Text string
	// Omitted is how many bytes of the file were cut off (0: all of it).
	Omitted int64
	// Problem says why the file could not be read ("" when it was).
	Problem string
}

// ProjectFiles reads the project's instruction files for workspace (see
// the package comment), outermost directory first. A file that exists
// but cannot be read is returned with its Problem, so the model (and the
// user reading the session) learns of it; a missing one is skipped.
func ProjectFiles(fsys tools.FS, workspace string) []File {
	if workspace == "" {
		return nil
	}
	var out []File
	budget := int64(MaxProjectBytes)
	for _, dir := range dirsFromRoot(fsys, filepath.Clean(workspace)) {
		var first []byte
		for i, name := range InstructionFiles {
			p := filepath.Join(dir, name)
			f, data, ok := readBounded(fsys, p, min(MaxFileBytes, budget))
			if !ok {
				continue
			}
			if i > 0 && first != nil && data != nil && bytes.Equal(first, data) {
				continue // the same text twice (CLAUDE.md -> AGENTS.md)
			}
			if i == 0 {
				first = data
			}
			budget -= int64(len(f.Text))
			out = append(out, f)
		}
	}
	return out
}

// dirsFromRoot lists the directories from the repository root down to
// workspace; just workspace when no directory on the way up has .git.
func dirsFromRoot(fsys tools.FS, workspace string) []string {
	var up []string
	for dir := workspace; ; {
		up = append(up, dir)
		if _, err := fsys.Stat(filepath.Join(dir, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return []string{workspace} // no repository
		}
		dir = parent
	}
	slices.Reverse(up)
	return up
}

// readBounded reads at most limit bytes of the file at p. ok is false
// when there is no such file; data is the whole content when it fit
// (for the duplicate check), nil when it was cut or unreadable.
func readBounded(fsys tools.FS, p string, limit int64) (f File, data []byte, ok bool) {
	f.Path = p
	rc, fi, err := fsys.OpenRegular(p)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil, false
	}
	if err != nil {
		f.Problem = fmt.Sprintf("could not be read: %v", err)
		return f, nil, true
	}
	defer rc.Close()
	limit = max(limit, 0)
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		f.Problem = fmt.Sprintf("could not be read: %v", err)
		return f, nil, true
	}
	if int64(len(b)) <= limit {
		f.Text = string(b)
		return f, b, true
	}
	cut := int(limit)
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	f.Text = string(b[:cut])
	f.Omitted = max(fi.Size(), int64(len(b))) - int64(cut)
	return f, nil, true
}
