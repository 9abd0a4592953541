package tools

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

const findDefaultLimit = 1000

var findTool = toolDef{
	description: fmt.Sprintf("Search for files by glob pattern. Returns matching file paths, sorted. A pattern without '/' matches file names at any depth; a pattern with '/' matches the path relative to the search directory. Respects .gitignore. Output is truncated to %d results or %dKB (whichever is hit first).", findDefaultLimit, MaxBytes/1024),
	schema: `{"type":"object","properties":{` +
		`"pattern":{"type":"string","description":"Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"},` +
		`"path":{"type":"string","description":"Directory to search in (default: current directory)"},` +
		`"limit":{"type":"integer","description":"Maximum number of results (default: 1000)"}},` +
		`"required":["pattern"]}`,
	spec: readOnlySpec,
	run:  decoded(Find, runFind),
}

type findArgs struct {
	Pattern *string `json:"pattern"`
	Path    string  `json:"path"`
	Limit   optNum  `json:"limit"`
}

func runFind(ctx context.Context, a *findArgs, opts *Options) Result {
	if strings.TrimSpace(*a.Pattern) == "" {
		return missing(Find, "pattern")
	}
	root, _, fail := opts.statDir(Find, a.Path, true)
	if fail != nil {
		return *fail
	}
	// An absolute pattern under root is taken relative to it.
	pattern, _ := strings.CutPrefix(strings.TrimSpace(*a.Pattern), root+"/")
	g := compileGlob(pattern)
	if g.err != nil {
		return errorf("find: %v", g.err)
	}
	limit := max(1, a.Limit.int(findDefaultLimit))

	var found []string
	limitHit := false
	ruled, err := walkTree(ctx, opts, root, func(abs string, d fs.DirEntry) error {
		if !g.matchFile(root, abs) {
			return nil
		}
		if len(found) == limit {
			limitHit = true
			return errStopWalk
		}
		out := opts.relOut(root, abs)
		if d.IsDir() {
			out += "/"
		}
		found = append(found, out)
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return errorf("Operation aborted")
		}
		return errorf("find failed: %v", err)
	}
	if len(found) == 0 {
		return listing([]string{"No files found matching pattern"}, map[string]any{}, "", ruledNote(ruled))
	}
	sort.Strings(found)
	details := map[string]any{"count": len(found)}
	limitNote := ""
	if limitHit {
		limitNote = fmt.Sprintf("%d results limit reached. Use limit=%d for more, or refine pattern", limit, limit*2)
		details["resultLimitReached"] = limit
	}
	return listing(found, details, limitNote, ruledNote(ruled))
}
