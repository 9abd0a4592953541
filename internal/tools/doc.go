// Package tools implements the seven tools of the terminal coding agent pi
// (read, write, edit, bash, grep, find, ls) in pure Go, for the durable agent.
// docs/tools.md describes each tool, its limits and what it leaves behind.
//
// # Contract
//
// A tool call is one Run(ctx, name, args, opts). args is the JSON object the
// model sent; opts is the environment the call runs in. Run never panics and
// never returns a Go error: every failure is a Result with IsError set and a
// short message the model can act on. Argument errors name the tool and the
// parameter. Unknown fields are ignored, names match as encoding/json
// matches them (case-insensitively), and numbers or booleans sent as
// strings are accepted. Specs returns the name, description and JSON Schema
// of each tool, as the providers send them to the model (parameter names,
// descriptions, limits and messages follow pi).
//
// Relative paths resolve against Options.Workspace; a leading "@" is
// stripped. With Options.Confine, a path whose real location lies outside
// the workspace is refused with "path P is outside the workspace W", and
// the operation itself runs through an os.Root of the workspace, so a link
// swapped in after that check cannot lead it out either.
//
// Output is cut at MaxLines lines or MaxBytes bytes and the cut is announced
// in the content. edit is made exactly-once by Options.Rerun (see edit.go);
// bash is the caller's problem.
//
// Every process a tool starts and every file access it makes goes through
// Options.Runner (Local unless the worker sets up another, such as the
// sandbox). Under Local, bash runs "bash -c" (or "sh -c") in its own process
// group, and when the call ends every process still carrying its
// CallMarkerEnv marker is killed (on Linux, through /proc).
package tools
