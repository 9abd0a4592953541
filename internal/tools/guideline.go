package tools

import "strings"

// guidelines are one line of advice per tool on using it well, for the
// system prompt (internal/sysprompt). They sit here, beside the tools'
// descriptions, so the facts of a tool are in one place.
var guidelines = map[string]string{
	Read: "Read a file before you change it; for a large file, read the part you need with offset and limit.",
	Write: "Use write to create a file or to replace one whole; change part of a file with edit, " +
		"so what you did not mean to touch stays as it was.",
	Edit: "oldText must match the file exactly, whitespace included, and occur once: copy it from what read " +
		"showed, with enough surrounding lines to make it unique.",
	Bash: "Run builds, tests, git and other programs with bash; commands run without a terminal and cannot " +
		"prompt, so pass non-interactive flags, and give a command that may hang a timeout.",
	Grep: "Search file contents with grep rather than grep or rg in bash: it skips what .gitignore ignores " +
		"and bounds its output.",
	Find: "Find files by name or path pattern with find rather than find in bash: it skips what .gitignore ignores.",
	Ls:   "List a directory with ls rather than ls in bash.",
	Task: "Delegate independent pieces of a large job with task, several in one answer to run them at once; " +
		"each prompt must stand alone, and the sub-agent's answer is all you see of its work.",
}

// Guideline returns the tool's advice for the system prompt ("" for a
// name no tool has).
func Guideline(name string) string { return guidelines[name] }

// Summary returns the first sentence of the tool's description ("" for a
// name no tool has): what the tool is for, in a line.
func Summary(name string) string {
	t, ok := tools[name]
	if !ok {
		return ""
	}
	if i := strings.Index(t.description, ". "); i >= 0 {
		return t.description[:i+1]
	}
	return t.description
}
