package tools

import (
	"context"
	"fmt"
	"path/filepath"
)

var writeTool = toolDef{
	description: "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
	schema: `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Path to the file to write (relative or absolute)"},` +
		`"content":{"type":"string","description":"Content to write to the file"}},` +
		`"required":["path","content"]}`,
	spec: fileSpec,
	run:  decoded(Write, runWrite),
}

type writeArgs struct {
	Path    *string `json:"path"`
	Content *string `json:"content"`
}

func runWrite(ctx context.Context, a *writeArgs, opts *Options) Result {
	abs, shown, fail := opts.target(Write, *a.Path, true)
	if fail != nil {
		return *fail
	}
	if fi, err := opts.fs().Stat(abs); err == nil && fi.IsDir() {
		return errorf("%s is a directory; cannot write a file there.", shown)
	}
	if err := opts.fs().MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return errorf("Cannot create the directory of %s: %v", shown, unwrapPathErr(err))
	}
	if ctx.Err() != nil {
		return errorf("Operation aborted")
	}
	// Crash-safe, and keeps the mode of an existing file.
	if err := opts.fs().ReplaceFile(abs, []byte(*a.Content)); err != nil {
		if r, ok := notRegular(Write, shown, err); ok {
			return r
		}
		return errorf("Cannot write %s: %v", shown, unwrapPathErr(err))
	}
	return Result{
		Content: fmt.Sprintf("Successfully wrote %d bytes to %s", len(*a.Content), shown),
		Details: map[string]any{"bytes": len(*a.Content)},
	}
}
