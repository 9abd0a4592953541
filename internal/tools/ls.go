package tools

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

const lsDefaultLimit = 500

var lsTool = toolDef{
	description: fmt.Sprintf("List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to %d entries or %dKB (whichever is hit first).", lsDefaultLimit, MaxBytes/1024),
	schema: `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Directory to list (default: current directory)"},` +
		`"limit":{"type":"integer","description":"Maximum number of entries to return (default: 500)"}}}`,
	spec: readOnlySpec,
	run:  decoded(Ls, runLs),
}

type lsArgs struct {
	Path  string `json:"path"`
	Limit optNum `json:"limit"`
}

func runLs(ctx context.Context, a *lsArgs, opts *Options) Result {
	dir, _, fail := opts.statDir(Ls, a.Path, true)
	if fail != nil {
		return *fail
	}
	entries, err := opts.fs().ReadDir(dir)
	if err != nil {
		return errorf("Cannot read directory %s: %v", displayPath(a.Path), unwrapPathErr(err))
	}
	if ctx.Err() != nil {
		return errorf("Operation aborted")
	}
	slices.SortStableFunc(entries, func(a, b fs.DirEntry) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.Name()), strings.ToLower(b.Name())), strings.Compare(a.Name(), b.Name()))
	})
	names := make([]string, 0, len(entries))
	rule, realDir, ruled := opts.ruleOn(), dir, 0
	if rule != nil {
		if real, err := realPath(opts.fs(), dir); err == nil {
			realDir = real
		}
	}
	for _, e := range entries {
		name := e.Name()
		isDir := e.IsDir()
		if rule != nil && !isDir {
			if why, _ := rule(filepath.Join(realDir, name)); why != "" {
				ruled++
				continue
			}
		}
		if e.Type()&os.ModeSymlink != 0 {
			// A link to a directory lists as one.
			if st, err := opts.fs().Stat(filepath.Join(dir, name)); err == nil && st.IsDir() {
				isDir = true
			}
		}
		if isDir {
			name += "/"
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return listing([]string{"(empty directory)"}, map[string]any{}, "", ruledNote(ruled))
	}
	limit := max(1, a.Limit.int(lsDefaultLimit))
	details := map[string]any{"entries": len(entries)}
	limitNote := ""
	if len(names) > limit {
		names = names[:limit]
		limitNote = fmt.Sprintf("%d entries limit reached. Use limit=%d for more", limit, limit*2)
		details["entryLimitReached"] = limit
	}
	return listing(names, details, limitNote, ruledNote(ruled))
}
