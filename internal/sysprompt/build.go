package sysprompt

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/durableagent/durableagent/internal/tools"
)

// Facts are everything the system prompt says. The caller gathers them
// (the session's workspace, the worker's OS, the prompt's time, the
// enabled tools, the project files, the user's settings).
type Facts struct {
	// Workspace is the session's working directory ("": none, a chat).
	Workspace string
	// OS is the operating system the tools run on, e.g. "linux/amd64".
	OS string
	// Shell is the shell bash commands run in, e.g. "bash".
	Shell string
	// Date is today's date where the prompt started (only its date in
	// its location is said).
	Date time.Time
	// Tools are the enabled tools, in the order they are listed; names
	// internal/tools does not know are left out.
	Tools []string
	// Files are the project instruction files (ProjectFiles).
	Files []File
	// Replace replaces the preamble (agent.systemPrompt) when not blank.
	Replace string
	// Append is added at the end (agent.appendSystemPrompt) when not blank.
	Append string
}

// The settings named in the sources when they shaped the text.
const (
	SourceReplace = "setting agent.systemPrompt"
	SourceAppend  = "setting agent.appendSystemPrompt"
)

// preamble is what the model is told about itself unless the user
// replaces it.
const preamble = `You are a coding agent. You work in the user's project on their machine: you read code, run commands, change files and report what you did. Your work is durable: it survives restarts of the program that runs it, and the user may send you more instructions while you work.

How to work:
- Look before you change anything: read the files involved and find how this project already does such things.
- Make the smallest change that does the job, in the project's own style; leave code you did not need to touch as it is.
- Check your work: build and run the tests that cover what you changed, and say what you ran and what it showed.
- When a command or a tool call fails, read the error and act on it rather than repeating the same call.
- Answer in plain, concise text; name files by their paths. Say plainly what you did not do or could not check.`

// Build returns the system prompt of facts and the sources it drew on
// (see the package comment).
func Build(f Facts) (text string, sources []string) {
	var b strings.Builder
	if strings.TrimSpace(f.Replace) != "" {
		b.WriteString(strings.TrimSpace(f.Replace))
		sources = append(sources, SourceReplace)
	} else {
		b.WriteString(preamble)
	}
	writeTools(&b, f.Tools)
	writeEnvironment(&b, f)
	sources = append(sources, writeFiles(&b, f.Files)...)
	if strings.TrimSpace(f.Append) != "" {
		b.WriteString("\n\n")
		b.WriteString(strings.TrimSpace(f.Append))
		sources = append(sources, SourceAppend)
	}
	b.WriteString("\n")
	return b.String(), sources
}

// Hash is the hex SHA-256 of a system prompt's text, as the session
// records it.
func Hash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

func writeTools(b *strings.Builder, names []string) {
	var lines []string
	for _, n := range names {
		if tools.IsMCP(n) {
			lines = append(lines, fmt.Sprintf("- %s: a tool (or tools) of an MCP server, described where it is offered.", n))
		}
		if !tools.Known(n) {
			continue
		}
		lines = append(lines, fmt.Sprintf("- %s: %s %s", n, tools.Summary(n), tools.Guideline(n)))
	}
	if len(lines) == 0 {
		b.WriteString("\n\nYou have no tools in this session: answer from the conversation alone.")
		return
	}
	b.WriteString("\n\n# Tools\n\nThese are your tools and how to use them well:\n")
	b.WriteString(strings.Join(lines, "\n"))
}

func writeEnvironment(b *strings.Builder, f Facts) {
	var lines []string
	if f.Workspace != "" {
		lines = append(lines, "Working directory: "+f.Workspace+" (relative paths resolve against it, and commands start in it)")
	}
	if f.OS != "" {
		lines = append(lines, "Operating system: "+f.OS)
	}
	if f.Shell != "" {
		lines = append(lines, "Shell: "+f.Shell)
	}
	if !f.Date.IsZero() {
		lines = append(lines, "Today's date: "+f.Date.Format("Monday, 2 January 2006"))
	}
	if len(lines) > 0 {
		b.WriteString("\n\n# Environment\n\n- " + strings.Join(lines, "\n- "))
	}
}

// writeFiles writes the project files and returns their paths.
func writeFiles(b *strings.Builder, files []File) []string {
	if len(files) == 0 {
		return nil
	}
	paths := make([]string, 0, len(files))
	b.WriteString("\n\n# Project instructions\n\nThe project's instruction files, outermost directory first. " +
		"Follow them; where two disagree, the one nearer the working directory wins.")
	for _, file := range files {
		paths = append(paths, file.Path)
		fmt.Fprintf(b, "\n\n## %s\n\n", file.Path)
		if file.Problem != "" {
			fmt.Fprintf(b, "(This file %s.)", file.Problem)
			continue
		}
		b.WriteString(strings.TrimRight(file.Text, "\n"))
		if file.Omitted > 0 {
			fmt.Fprintf(b, "\n\n[%d more bytes of this file are left out of the system prompt; read the file if you need the rest.]", file.Omitted)
		}
	}
	return paths
}
