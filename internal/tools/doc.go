// Package tools implements the seven tools of the terminal coding agent pi
// (read, write, edit, bash, grep, find, ls) in pure Go, for the durable agent.
//
// # Contract
//
// A tool call is one Run(ctx, name, args, opts). args is the JSON object the
// model sent; opts is the environment the call runs in (workspace, confinement,
// bash environment, re-run flag, progress callback). Run never panics and
// never returns a Go error: every failure — malformed arguments, a missing
// parameter, an unknown tool, a missing file, a failing command, a cancelled
// context — is a Result with IsError set and a short message the model can act
// on. Argument errors name the tool and the parameter. Unknown fields are
// ignored, and numbers or booleans sent as strings are accepted.
//
// Specs returns the name, description and JSON Schema of each tool, as the
// providers send them to the model. Parameter names, descriptions, limits and
// messages follow pi (packages/coding-agent/src/core/tools).
//
// # Paths
//
// Relative paths resolve against Options.Workspace (the cwd of every tool); a
// leading "@" is stripped. With Options.Confine, a path whose real location
// (after "..", and after every symbolic link of its existing prefix, dangling
// links included) lies outside the workspace is refused with
// "path P is outside the workspace W", and the operation itself then runs
// through an os.Root of the workspace, so a link swapped in after that
// check cannot lead it out either. bash runs in the workspace but cannot
// be confined; the file tools can.
//
// # Output limits
//
// Tool output is cut at MaxLines lines or MaxBytes bytes, whichever comes
// first, and the cut is announced in the content: read keeps the head and says
// which offset to continue at; bash keeps the tail and saves the full output to
// a file under Options.TempDir; grep, find and ls keep the head and say which
// limit was hit. grep cuts single lines at GrepMaxLineLength characters.
//
// find matches a pattern without "/" against file names at any depth and a
// pattern with "/" against the path relative to the searched directory; grep's
// glob filter works the same way.
//
// grep and find skip .git directories and honour .gitignore files (the ones
// from the workspace root down to the searched directory, and every nested
// one), whether or not the directory is a git repository. Their output paths
// are relative to the workspace when the searched path lies inside it
// (otherwise to the searched directory), so they can be passed straight back
// to read and edit.
//
// # Durability
//
// A durable agent may run a tool call again after a crash, without knowing
// whether the first attempt took effect. read, grep, find and ls have no
// effect; write is idempotent by nature; bash is the caller's problem. edit is
// made exactly-once by Options.Rerun: on a re-run, when oldText is no longer in
// the file (or only inside the newText the first attempt inserted) and newText
// is there exactly once, edit reports success with Details["alreadyApplied"]
// instead of failing with "text not found".
//
// # Runner
//
// Every process a tool starts and every file access it makes goes through
// Options.Runner (see Runner): Local, the worker's own process and file
// system, unless the worker sets up another (a sandbox is one more
// implementation). The process rules below are Local's.
//
// # Environment
//
// bash runs "bash -c" (or "sh -c" without bash) in its own process group with
// stdin from /dev/null and stdout and stderr merged. Cancelling the context or
// hitting the timeout (the call's "timeout" in seconds, else
// Options.DefaultTimeout; 0 means none) kills the whole group. The environment is Options.Env,
// or the worker's own environment with secrets removed by ScrubEnv, plus
// CallMarkerEnv: when the call ends, however it ends, every process still
// carrying the call's marker, in its process group or descending from one
// of those is killed (on Linux, through /proc).
//
// Besides the standard library and the agent package, the package uses
// golang.org/x/sys/unix, doublestar (globs), prometheus/procfs (/proc) and
// charmbracelet/x/ansi (escape sequences); it has no Temporal dependency.
package tools
