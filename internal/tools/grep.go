package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

const (
	grepDefaultLimit = 100
	// grepMaxFileSize: larger files are not searched.
	grepMaxFileSize = 32 << 20
)

var grepTool = toolDef{
	description: fmt.Sprintf("Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to %d matches or %dKB (whichever is hit first). Long lines are truncated to %d chars.", grepDefaultLimit, MaxBytes/1024, GrepMaxLineLength),
	schema: `{"type":"object","properties":{` +
		`"pattern":{"type":"string","description":"Search pattern (regex or literal string)"},` +
		`"path":{"type":"string","description":"Directory or file to search (default: current directory)"},` +
		`"glob":{"type":"string","description":"Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"},` +
		`"ignoreCase":{"type":"boolean","description":"Case-insensitive search (default: false)"},` +
		`"literal":{"type":"boolean","description":"Treat pattern as literal string instead of regex (default: false)"},` +
		`"context":{"type":"integer","description":"Number of lines to show before and after each match (default: 0)"},` +
		`"limit":{"type":"integer","description":"Maximum number of matches to return (default: 100)"}},` +
		`"required":["pattern"]}`,
	spec: readOnlySpec,
	run:  decoded(Grep, runGrep),
}

type grepArgs struct {
	Pattern    *string `json:"pattern"`
	Path       string  `json:"path"`
	Glob       string  `json:"glob"`
	IgnoreCase optBool `json:"ignoreCase"`
	Literal    optBool `json:"literal"`
	Context    optNum  `json:"context"`
	Limit      optNum  `json:"limit"`
}

// grepState collects the output of one search.
type grepState struct {
	fs        FS
	re        *regexp.Regexp
	context   int
	limit     int
	matches   int
	limitHit  bool
	linesCut  bool
	out       []string
	lastGroup bool // a group was written (a "--" separates the next)
}

func runGrep(ctx context.Context, a *grepArgs, opts *Options) Result {
	if *a.Pattern == "" {
		return missing(Grep, "pattern")
	}
	expr := *a.Pattern
	if a.Literal.v {
		expr = regexp.QuoteMeta(expr)
	}
	if a.IgnoreCase.v {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return errorf("Invalid regular expression %q: %v. Use literal=true to search for the text as is.", *a.Pattern, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	root, fi, fail := opts.statDir(Grep, a.Path, false)
	if fail != nil {
		return *fail
	}
	given := a.Path
	st := &grepState{fs: opts.fs(), re: re, context: max(0, a.Context.int(0)), limit: max(1, a.Limit.int(grepDefaultLimit))}

	ruled := 0
	if !fi.IsDir() {
		// A file named by the model: what keeps it from being searched is
		// said, not passed over.
		real, rerr := opts.ruled(Grep, root, displayPath(given))
		if rerr != nil {
			return errorf("%v", rerr)
		}
		err = st.searchFile(opts.relOut(filepath.Dir(root), root), real)
		if r, ok := notRegular(Grep, displayPath(given), err); ok {
			return r
		}
		if errors.Is(err, errTooLarge) {
			return errorf("grep: %s is larger than grep's %s limit; search it with bash (grep or rg)", displayPath(given), formatSize(grepMaxFileSize))
		}
		if err != nil && !errors.Is(err, errStopWalk) {
			return fileError(displayPath(given), err)
		}
	} else {
		var filter *globPattern
		g, negate := strings.CutPrefix(strings.TrimSpace(a.Glob), "!")
		if g != "" || negate {
			filter = compileGlob(g)
			if filter.err != nil {
				return errorf("grep: %v", filter.err)
			}
		}
		ruled, err = walkTree(ctx, opts, root, func(abs string, d fs.DirEntry) error {
			if !d.Type().IsRegular() {
				return nil // directories are walked; symlinks are not followed
			}
			if filter != nil && filter.matchFile(root, abs) == negate {
				return nil
			}
			// Files that cannot be searched (too large, swapped for a
			// FIFO, unreadable) are skipped, like ripgrep does.
			if err := st.searchFile(opts.relOut(root, abs), abs); errors.Is(err, errStopWalk) {
				return err
			}
			return nil
		})
	}
	if err != nil && !errors.Is(err, errStopWalk) {
		if ctx.Err() != nil {
			return errorf("Operation aborted")
		}
		return errorf("grep failed: %v", err)
	}
	if st.matches == 0 {
		return listing([]string{"No matches found"}, map[string]any{}, "", ruledNote(ruled))
	}
	details := map[string]any{"matches": st.matches}
	limitNote, linesNote := "", ""
	if st.limitHit {
		limitNote = fmt.Sprintf("%d matches limit reached. Use limit=%d for more, or refine pattern", st.limit, st.limit*2)
		details["matchLimitReached"] = st.limit
	}
	if st.linesCut {
		linesNote = fmt.Sprintf("Some lines truncated to %d chars. Use read tool to see full lines", GrepMaxLineLength)
		details["linesTruncated"] = true
	}
	return listing(st.out, details, limitNote, linesNote, ruledNote(ruled))
}

// searchFile appends the matches of one file (shown as rel). It returns
// errStopWalk once the match limit is exceeded, and why the file could not
// be searched: a *NotRegularError (only regular files are opened, see
// openRegular), errTooLarge above grepMaxFileSize (never read past it), or
// the error opening or reading it. A binary file has no matches.
func (st *grepState) searchFile(rel, abs string) error {
	data, err := readRegular(st.fs, abs, grepMaxFileSize)
	if err != nil {
		return err
	}
	if isBinary(data) {
		return nil
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	var hits []int
	for i, l := range lines {
		if !st.re.MatchString(l) {
			continue
		}
		if st.matches == st.limit {
			st.limitHit = true
			break
		}
		st.matches++
		hits = append(hits, i)
	}
	st.emit(rel, lines, hits)
	if st.limitHit {
		return errStopWalk
	}
	return nil
}

// emit writes the match lines and their context, merging overlapping
// context and separating groups with "--".
func (st *grepState) emit(rel string, lines []string, hits []int) {
	next := 0 // first line not yet written
	for n, h := range hits {
		from, to := max(h-st.context, next), min(h+st.context, len(lines)-1)
		if from > to {
			continue // already written as context of the previous match
		}
		if st.context > 0 && st.lastGroup && (n == 0 || from > next) {
			st.out = append(st.out, "--")
		}
		for i := from; i <= to; i++ {
			text, cut := truncateLine(lines[i], GrepMaxLineLength)
			st.linesCut = st.linesCut || cut
			if _, hit := slices.BinarySearch(hits, i); hit { // hits are ascending
				st.out = append(st.out, fmt.Sprintf("%s:%d: %s", rel, i+1, text))
			} else {
				st.out = append(st.out, fmt.Sprintf("%s-%d- %s", rel, i+1, text))
			}
		}
		next = to + 1
		st.lastGroup = true
	}
}

// displayPath is the path as the model gave it, or "." for the workspace.
func displayPath(given string) string {
	if p := cleanArg(given); p != "" {
		return p
	}
	return "."
}
