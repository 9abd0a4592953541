package toolview

import (
	"fmt"
	"regexp"
	"strings"
)

// Kind says what a line of a view is.
type Kind int

const (
	// Plain is output or message text.
	Plain Kind = iota
	// Added is a diff line that the edit added ("+").
	Added
	// Removed is a diff line that the edit removed ("-").
	Removed
	// Status is how a command ended ("exit 0", "Command exited with
	// code 1", "Command timed out after 5 seconds").
	Status
	// Elided says what a collapsed view left out.
	Elided
)

// Line is one line of a view.
type Line struct {
	Text string
	Kind Kind
}

// Bounds of a collapsed view.
const (
	// CommandTailLines is how many of a command's last output lines show.
	CommandTailLines = 10
	// DiffLines is how many lines of an edit's diff show (the edit tool
	// already bounds each block of its diff).
	DiffLines = 60
	// TextLines is how many first lines of any other result show (of a
	// successful read, grep, find or ls: one).
	TextLines = 8
)

// listing are the tools whose successful result is file content or a
// list: collapsed, they show their first line and how many follow.
var listing = map[string]bool{"read": true, "grep": true, "find": true, "ls": true}

// statusLine matches the line bash appends to a result that did not exit
// 0 (internal/tools/bash.go).
var statusLine = regexp.MustCompile(`^Command (exited with code -?\d+|timed out after .*|aborted|was killed by signal .*|was stopped by the sandbox's .*|failed: .*)$`)

// Collapsed is the bounded view of a result: an edit's diff, a command's
// last CommandTailLines lines and its exit, or the first TextLines lines
// of anything else; an error's text is shown whole up to TextLines lines.
func Collapsed(tool, text string, isError bool) []Line {
	return view(tool, text, isError, false)
}

// Full is every line of a result, in the same shape as Collapsed.
func Full(tool, text string, isError bool) []Line {
	return view(tool, text, isError, true)
}

func view(tool, text string, isError, full bool) []Line {
	lines := Lines(text)
	switch {
	case tool == "edit" && !isError:
		return diffView(lines, full)
	case tool == "bash":
		return commandView(lines, isError, full)
	}
	keep := TextLines
	if !isError && listing[tool] {
		keep = 1
	}
	if full || len(lines) <= keep {
		return plain(lines)
	}
	return append(plain(lines[:keep]), Line{fmt.Sprintf("… %d more lines", len(lines)-keep), Elided})
}

// diffView shows the edit's message, then its diff lines marked Added or
// Removed.
func diffView(lines []string, full bool) []Line {
	var out []Line
	n := 0
	for i, l := range lines {
		if !full && n == DiffLines {
			out = append(out, Line{fmt.Sprintf("… %d more lines", len(lines)-i), Elided})
			break
		}
		k := Plain
		switch {
		case strings.HasPrefix(l, "+"):
			k = Added
		case strings.HasPrefix(l, "-"):
			k = Removed
		}
		if l == "" {
			continue // the blank line between the message and the diff (a diff line has its mark and number)
		}
		out = append(out, Line{l, k})
		n++
	}
	return out
}

// commandView shows a command's output (its last lines when collapsed)
// and how it ended: the status line bash wrote, or "exit 0".
func commandView(lines []string, isError, full bool) []Line {
	status := ""
	if n := len(lines); n > 0 && statusLine.MatchString(lines[n-1]) {
		status, lines = lines[n-1], lines[:n-1]
		for len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
	} else if !isError {
		status = "exit 0"
	}
	var out []Line
	if !full && len(lines) > CommandTailLines {
		out = append(out, Line{fmt.Sprintf("… %d earlier lines", len(lines)-CommandTailLines), Elided})
		lines = lines[len(lines)-CommandTailLines:]
	}
	out = append(out, plain(lines)...)
	if status != "" {
		out = append(out, Line{status, Status})
	}
	return out
}

func plain(lines []string) []Line {
	out := make([]Line, len(lines))
	for i, l := range lines {
		out[i] = Line{l, Plain}
	}
	return out
}
