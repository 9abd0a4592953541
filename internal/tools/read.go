package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"slices"
	"strings"
)

var readTool = toolDef{
	description: fmt.Sprintf("Read the contents of a file. Supports text files and images (jpg, png, gif, webp); for images only their type and size are reported. For text files, output is truncated to %d lines or %dKB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.", MaxLines, MaxBytes/1024),
	schema: `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Path to the file to read (relative or absolute)"},` +
		`"offset":{"type":"integer","description":"Line number to start reading from (1-indexed)"},` +
		`"limit":{"type":"integer","description":"Maximum number of lines to read"}},` +
		`"required":["path"]}`,
	spec: readOnlySpec,
	run:  decoded(Read, runRead),
}

type readArgs struct {
	Path   *string `json:"path"`
	Offset optNum  `json:"offset"`
	Limit  optNum  `json:"limit"`
}

func runRead(ctx context.Context, a *readArgs, opts *Options) Result {
	abs, shown, fail := opts.target(Read, *a.Path, false)
	if fail != nil {
		return *fail
	}
	fi, err := opts.fs().Stat(abs)
	if err != nil {
		return fileError(shown, err)
	}
	if fi.IsDir() {
		return errorf("%s is a directory, not a file. Use ls to list its contents.", shown)
	}
	f, fi, err := opts.fs().OpenRegular(abs)
	if r, ok := notRegular(Read, shown, err); ok {
		return r
	}
	if err != nil {
		return fileError(shown, err)
	}
	defer f.Close()
	// Bounded by the size at open (a file appended to meanwhile, as by a
	// background command, cannot keep the read going); a size of 0, as /proc
	// files report, is read to its end. Either way selectLines holds at most
	// MaxBytes of it.
	var src io.Reader = f
	if fi.Size() > 0 {
		src = io.LimitReader(f, fi.Size())
	}
	br := bufio.NewReaderSize(src, 64*1024)
	head, _ := br.Peek(8000)
	if mime := imageType(head); mime != "" {
		return Result{
			Content: fmt.Sprintf("Read image file [%s]: %s, %d bytes (image content is not shown).", mime, shown, fi.Size()),
			Details: map[string]any{"mimeType": mime, "bytes": fi.Size()},
		}
	}
	if isBinary(head) {
		return Result{
			Content: fmt.Sprintf("%s is a binary file (%d bytes); its content is not shown. Use bash (e.g. file, xxd | head) to inspect it.", shown, fi.Size()),
			Details: map[string]any{"binary": true, "bytes": fi.Size()},
		}
	}

	start := max(a.Offset.int(1), 1) - 1
	want := a.Limit.int(-1) // lines wanted from start; -1: all
	if want <= 0 {
		want = -1
	}
	sel, err := selectLines(ctx, br, start, want)
	if err != nil {
		if ctx.Err() != nil {
			return errorf("Operation aborted")
		}
		return errorf("Cannot read %s: %v", shown, err)
	}
	total := sel.total
	if total == 0 {
		return Result{Content: "(empty file)"}
	}
	if start >= total {
		return errorf("Offset %d is beyond end of file (%d lines total)", a.Offset.int(1), total)
	}
	end := total
	userLimited := false
	if want > 0 && start+want < total {
		end, userLimited = start+want, true
	}
	text := strings.ToValidUTF8(strings.Join(sel.lines, "\n"), "\uFFFD")
	tr := truncateHead(text, MaxLines, MaxBytes)
	first := start + 1

	switch {
	case tr.firstLineTooLong:
		return Result{
			Content: fmt.Sprintf("[Line %d is %s, exceeds %s limit. Use bash: sed -n '%dp' %s | head -c %d]",
				first, formatSize(sel.firstLen), formatSize(MaxBytes), first, shown, MaxBytes),
			Details: map[string]any{"truncated": true},
		}
	case tr.truncated:
		last := first + tr.outLines - 1
		limit := ""
		if tr.byBytes {
			limit = fmt.Sprintf(" (%s limit)", formatSize(MaxBytes))
		}
		return Result{
			Content: fmt.Sprintf("%s\n\n[Showing lines %d-%d of %d%s. Use offset=%d to continue.]",
				tr.content, first, last, total, limit, last+1),
			Details: map[string]any{"truncated": true, "totalLines": total, "nextOffset": last + 1},
		}
	case userLimited:
		return Result{
			Content: fmt.Sprintf("%s\n\n[%d more lines in file. Use offset=%d to continue.]", tr.content, total-end, end+1),
		}
	}
	return Result{Content: tr.content}
}

// fileError renders an error from opening the file the model named.
func fileError(shown string, err error) Result {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorf("File not found: %s", shown)
	case errors.Is(err, fs.ErrPermission):
		return errorf("Permission denied: %s", shown)
	}
	return errorf("Cannot read %s: %v", shown, unwrapPathErr(err))
}

// imageType returns the MIME type of a supported image (png, jpeg, gif,
// webp), judged by its magic bytes, or "".
func imageType(b []byte) string {
	if t := http.DetectContentType(b); slices.Contains([]string{"image/png", "image/jpeg", "image/gif", "image/webp"}, t) {
		return t
	}
	return ""
}

// isBinary reports whether the data looks binary: a NUL byte in its first
// 8000 bytes (git's and ripgrep's heuristic).
func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// selection is what selectLines kept of a file.
type selection struct {
	lines    []string // from the start line on; enough to apply the limits
	firstLen int      // full length in bytes of the start line
	total    int      // lines in the file (a final newline starts none)
}

// selectLines streams r, counting its lines and keeping those from line
// start (0-based, at most want of them unless want < 0) until one more than
// the limits allow has been kept, so truncateHead can tell it cut. Kept
// lines are themselves cut at MaxBytes+1 bytes; nothing else is held in
// memory, whatever the size of the file.
func selectLines(ctx context.Context, r *bufio.Reader, start, want int) (selection, error) {
	var sel selection
	keptBytes := 0
	full := false
	var cur []byte
	curLen := 0
	finish := func() {
		if sel.total == start {
			sel.firstLen = curLen
		}
		if sel.total >= start && !full && (want < 0 || sel.total < start+want) {
			sel.lines = append(sel.lines, string(cur))
			keptBytes += len(cur) + 1
			full = keptBytes > MaxBytes+1 || len(sel.lines) > MaxLines
		}
		sel.total++
		cur, curLen = cur[:0], 0
	}
	for n := 0; ; n++ {
		if n%256 == 0 && ctx.Err() != nil {
			return sel, ctx.Err()
		}
		chunk, err := r.ReadSlice('\n')
		ended := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		if ended {
			chunk = chunk[:len(chunk)-1]
		}
		curLen += len(chunk)
		if room := MaxBytes + 1 - len(cur); room > 0 {
			cur = append(cur, chunk[:min(room, len(chunk))]...)
		}
		switch {
		case ended:
			finish()
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			if curLen > 0 {
				finish()
			}
			return sel, nil
		case err != nil:
			return sel, err
		}
	}
}
