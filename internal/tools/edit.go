package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

var editTool = toolDef{
	description: "Edit a file by replacing exact text. The oldText must match exactly (including whitespace) and occur exactly once in the file. Use this for precise, surgical edits.",
	schema: `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Path to the file to edit (relative or absolute)"},` +
		`"oldText":{"type":"string","description":"Exact text to find and replace (must match exactly)"},` +
		`"newText":{"type":"string","description":"New text to replace the old text with"}},` +
		`"required":["path","oldText","newText"]}`,
	spec: fileSpec,
	run:  decoded(Edit, runEdit),
}

type editArgs struct {
	Path    *string `json:"path"`
	OldText *string `json:"oldText"`
	NewText *string `json:"newText"`
}

const utf8BOM = "\uFEFF"

func runEdit(ctx context.Context, a *editArgs, opts *Options) Result {
	abs, shown, fail := opts.target(Edit, *a.Path, true)
	if fail != nil {
		return *fail
	}
	fi, err := opts.fs().Stat(abs)
	if err != nil {
		return fileError(shown, err)
	}
	if fi.IsDir() {
		return errorf("%s is a directory, not a file.", shown)
	}
	// Read no more than the size just seen: a file that grows meanwhile is
	// being written by someone else, and replacing it would lose that.
	data, err := readRegular(opts.fs(), abs, fi.Size())
	if r, ok := notRegular(Edit, shown, err); ok {
		return r
	}
	if errors.Is(err, errTooLarge) {
		return errorf("edit: %s changed while it was being read; try again", shown)
	}
	if err != nil {
		return fileError(shown, err)
	}
	body, _ := strings.CutPrefix(string(data), utf8BOM)
	bom := string(data[:len(data)-len(body)]) // kept as it is

	// Bring the model's texts to the file's line ending.
	oldLF, newLF := toLF(*a.OldText), toLF(*a.NewText)
	oldE, newE := oldLF, newLF
	if lineEnding(body) == "\r\n" {
		oldE, newE = strings.ReplaceAll(oldLF, "\n", "\r\n"), strings.ReplaceAll(newLF, "\n", "\r\n")
	}
	if oldLF == "" {
		return errorf("oldText must not be empty. To create or overwrite a file use write.")
	}
	if oldLF == newLF {
		return errorf("No changes made to %s: oldText and newText are identical.", shown)
	}

	// Exact match first, then the normalised one.
	var spans [][2]int
	for _, i := range indexAll(body, oldE) {
		spans = append(spans, [2]int{i, i + len(oldE)})
	}
	fuzzy := false
	if len(spans) == 0 {
		needle := fuzzyNormalize(oldLF)
		if strings.TrimSpace(needle) != "" {
			hits := indexAll(fuzzyNormalize(body), needle)
			fuzzy = len(hits) > 0
			switch len(hits) {
			case 0:
			case 1:
				if f, t := fuzzySpan(body, hits[0], hits[0]+len(needle)); f >= 0 {
					spans = append(spans, [2]int{f, t})
				}
			default:
				for range hits {
					spans = append(spans, [2]int{-1, -1})
				}
			}
		}
	}

	if opts.Rerun && alreadyApplied(body, spans, newE) {
		return Result{
			Content: fmt.Sprintf("The edit was already applied to %s: oldText is no longer there and newText is. Nothing to do.", shown),
			Details: map[string]any{"alreadyApplied": true},
		}
	}
	switch {
	case len(spans) == 0:
		return errorf("Could not find the exact text in %s. The old text must match exactly including all whitespace and newlines.", shown)
	case len(spans) > 1:
		return errorf("Found %d occurrences of the text in %s. The text must be unique. Please provide more context to make it unique.", len(spans), shown)
	}
	from, to := spans[0][0], spans[0][1]
	after := body[:from] + newE + body[to:]
	if after == body {
		return errorf("No changes made to %s. The replacement produced identical content.", shown)
	}
	if ctx.Err() != nil {
		return errorf("Operation aborted")
	}
	if err := opts.fs().ReplaceFile(abs, []byte(bom+after)); err != nil {
		if r, ok := notRegular(Edit, shown, err); ok {
			return r
		}
		return errorf("Cannot write %s: %v", shown, unwrapPathErr(err))
	}
	diff, firstLine := renderDiff(body, after)
	content := fmt.Sprintf("Successfully replaced text in %s.", shown)
	details := map[string]any{"diff": diff, "firstChangedLine": firstLine}
	if fuzzy {
		content += " (oldText matched after normalising whitespace, quotes and dashes.)"
		details["fuzzyMatch"] = true
	}
	return Result{Content: content + "\n\n" + diff, Details: details}
}

// alreadyApplied decides, on a re-run, that the first attempt's edit is in
// the file: newText occurs exactly once and no match of oldText lies outside
// it (either oldText is gone, or it is only found inside the inserted
// newText). A deletion (empty newText) whose oldText is gone also counts.
func alreadyApplied(body string, spans [][2]int, newE string) bool {
	if newE == "" {
		return len(spans) == 0
	}
	at := indexAll(body, newE)
	if len(at) != 1 {
		return false
	}
	for _, s := range spans {
		if s[0] < at[0] || s[1] > at[0]+len(newE) {
			return false
		}
	}
	return true
}

// toLF turns CRLF line endings into LF.
func toLF(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// lineEnding returns the line ending of the file's first line: "\r\n" or "\n".
func lineEnding(s string) string {
	i := strings.IndexByte(s, '\n')
	if i > 0 && s[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}
