// Package sysprompt builds the system prompt of a session's model calls:
// what a terminal coding agent tells its model about itself and its world.
//
// # Contract
//
// Build is a pure function of its Facts: the same facts give the same text,
// byte for byte (the date is passed in, never read from a clock; nothing is
// read from the environment, so no secret of the worker's environment can
// reach the text). The text is, in order:
//
//  1. the preamble: that the model is a coding agent and how it should
//     work, or Facts.Replace (agent.systemPrompt) instead when set;
//  2. one line per enabled tool, in the order given: its summary and its
//     guideline, both from internal/tools (the one place for tool facts);
//  3. the environment: working directory, operating system, shell, date;
//  4. the project's instruction files (ProjectFiles), each under its path;
//  5. Facts.Append (agent.appendSystemPrompt) when set.
//
// Sources lists where the text came from besides this package: the paths
// of the project files and the settings that were set.
//
// ProjectFiles reads AGENTS.md and CLAUDE.md of the workspace and of each
// parent directory up to the repository root (the nearest directory, the
// workspace included, that holds a .git entry; with none, the workspace
// alone), outermost first, through a tool runner's file system
// (tools.FS). A CLAUDE.md with the same content as the AGENTS.md beside
// it (often a symbolic link) is left out. Each file is bounded to
// MaxFileBytes and all of them together to MaxProjectBytes: a bigger file
// is cut on a UTF-8 boundary, and the text says how many bytes were left
// out and that the model can read the rest with its tools.
package sysprompt
