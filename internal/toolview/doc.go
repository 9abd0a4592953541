// Package toolview decides how a tool result is shown to a person, the
// way terminal coding agents show it (issue 23): an edit as its unified
// diff, a command as the last lines of its output and how it exited, any
// other result (an error such as "the command may or may not have
// completed…") as its text. Collapsed views are bounded (Collapsed); Full
// shows every line. Lines carry a Kind so a terminal UI can colour a
// diff's added and removed lines; plain printers ignore it.
//
// CallLine is the one-line view of a call itself (the tool and its main
// argument), shown before its result.
//
// It works on the whole result text as the session stores it (the
// events carry only a preview) and is pure: no I/O.
package toolview
