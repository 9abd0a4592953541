package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreRule is one pattern line of a .gitignore file, matched with
// doublestar (see ignorePattern for the .gitignore spelling).
type ignoreRule struct {
	pattern  string // doublestar pattern, without the leading "/" and trailing "/"
	anchored bool   // it had a "/" before its end: matched from the file's directory
	negate   bool   // "!pattern": re-include
	dirOnly  bool   // "pattern/": directories only
}

// ignoreFile is the rules of one .gitignore, relative to its directory.
type ignoreFile struct {
	base  string // absolute directory the patterns are relative to
	rules []ignoreRule
}

// parseIgnore parses the text of a .gitignore file. A line that is not a
// valid pattern (an unclosed "[") is skipped, as git does.
func parseIgnore(base, text string) *ignoreFile {
	f := &ignoreFile{base: base}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		// Trailing spaces are dropped unless escaped with a backslash.
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
			line = line[:len(line)-1]
		}
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored = true
			line = strings.TrimPrefix(line, "/")
		}
		if line == "" {
			continue
		}
		r.pattern = ignorePattern(line)
		if !doublestar.ValidatePattern(r.pattern) {
			continue
		}
		f.rules = append(f.rules, r)
	}
	return f
}

// ignorePattern turns a .gitignore pattern into a doublestar one: braces
// are literal in .gitignore (escapes such as "\#" and "\!" are kept: both
// syntaxes read them alike), and a trailing "/**" matches only inside the
// directory, not the directory itself as doublestar's does.
func ignorePattern(p string) string {
	q := escapeBraces(p, nil)
	if strings.HasSuffix(p, "/**") {
		q += "/*"
	}
	return q
}

// loadIgnore reads dir's .gitignore; nil when there is none.
func loadIgnore(fsys FS, dir string) *ignoreFile {
	return loadIgnoreFile(fsys, dir, filepath.Join(dir, ".gitignore"))
}

// ignoreFileMaxSize bounds what is read of one ignore file; a larger one
// (or a FIFO or device in its place, see readRegular) is not loaded.
const ignoreFileMaxSize = 4 << 20

func loadIgnoreFile(fsys FS, base, file string) *ignoreFile {
	data, err := readRegular(fsys, file, ignoreFileMaxSize)
	if err != nil {
		return nil
	}
	f := parseIgnore(base, string(data))
	if len(f.rules) == 0 {
		return nil
	}
	return f
}

// ignored decides whether the absolute path p is ignored by the stack of
// .gitignore files (outermost first): the last matching rule wins, deeper
// files over shallower ones.
func ignored(stack []*ignoreFile, p string, isDir bool) bool {
	decided, ignore := false, false
	for _, f := range stack {
		rel, err := filepath.Rel(f.base, p)
		if err != nil || rel == "." || !within(f.base, p) {
			continue
		}
		rel = filepath.ToSlash(rel)
		name := rel[strings.LastIndex(rel, "/")+1:]
		for _, r := range f.rules {
			if r.dirOnly && !isDir {
				continue
			}
			// A name without "/" matches at any depth; the walk never
			// enters an ignored directory, so the last segment is enough.
			cand := name
			if r.anchored {
				cand = rel
			}
			if m, err := doublestar.Match(r.pattern, cand); err == nil && m {
				decided, ignore = true, !r.negate
			}
		}
	}
	return decided && ignore
}

// errStopWalk ends a walk early without an error.
var errStopWalk = errors.New("stop walk")

// visitFunc is called for every entry of a walk that is not ignored.
type visitFunc func(abs string, d fs.DirEntry) error

// walkTree walks the directory root depth-first in name order, skipping .git
// and whatever the .gitignore files say: the workspace's .git/info/exclude,
// the .gitignore files from the workspace down to root (when root is inside
// the workspace) and every one met on the way. Directories are entered after
// fn has seen them; symbolic links are never followed. fn returning
// errStopWalk ends the walk; a cancelled ctx ends it with ctx's error.
//
// A file (not a directory) whose real location an approval-policy path
// rule refuses (Options.PathRule) is passed over: fn does not see it, and
// ruled counts it.
func walkTree(ctx context.Context, opts *Options, root string, fn visitFunc) (ruled int, err error) {
	var stack []*ignoreFile
	ws, fsys := opts.workspace(), opts.fs()
	if rule := opts.ruleOn(); rule != nil {
		realRoot, rerr := realPath(fsys, root)
		if rerr != nil {
			realRoot = root
		}
		visit := fn
		fn = func(abs string, d fs.DirEntry) error {
			if !d.IsDir() {
				rel, _ := filepath.Rel(root, abs)
				if why, _ := rule(filepath.Join(realRoot, rel)); why != "" {
					ruled++
					return nil
				}
			}
			return visit(abs, d)
		}
	}
	if within(ws, root) {
		if f := loadIgnoreFile(fsys, ws, filepath.Join(ws, ".git", "info", "exclude")); f != nil {
			stack = append(stack, f)
		}
		for dir := ws; dir != root; {
			if f := loadIgnore(fsys, dir); f != nil {
				stack = append(stack, f)
			}
			rel, _ := filepath.Rel(dir, root)
			dir = filepath.Join(dir, strings.Split(filepath.ToSlash(rel), "/")[0])
		}
	}
	err = walkDir(ctx, fsys, root, stack, fn)
	if errors.Is(err, errStopWalk) {
		err = nil
	}
	return ruled, err
}

// ruledNote is the notice of n files a walk passed over for a path rule.
func ruledNote(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "1 file passed over: a path rule of the approval policy covers it"
	}
	return fmt.Sprintf("%d files passed over: path rules of the approval policy cover them", n)
}

func walkDir(ctx context.Context, fsys FS, dir string, stack []*ignoreFile, fn visitFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if f := loadIgnore(fsys, dir); f != nil {
		stack = append(stack[:len(stack):len(stack)], f)
	}
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil // unreadable directories are skipped, like ripgrep does
	}
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		abs := filepath.Join(dir, e.Name())
		if ignored(stack, abs, e.IsDir()) {
			continue
		}
		if err := fn(abs, e); err != nil {
			return err
		}
		if e.IsDir() {
			if err := walkDir(ctx, fsys, abs, stack, fn); err != nil {
				return err
			}
		}
	}
	return nil
}
