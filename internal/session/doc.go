// Package session stores conversation sessions as append-only JSONL files,
// one file per session: <dir>/<sessionID>.jsonl.
//
// Message bodies live here, not in Temporal history: workflow inputs carry a
// session id and entry ids only. The workflow chooses entry ids
// deterministically, so an activity that runs again writes the same ids, and
// Append treats an id that is already in the file as written (a no-op). That
// makes every session write idempotent and safe to retry.
//
// File format: the terminal agent's session format, version 3 (its
// SessionManager reads our files; docs/rpc.md lists the differences). The
// first line is a Header ({"type":"session","version":3,"id","timestamp",
// "cwd"}); every further line is one Entry ({"type","id","parentId",
// "timestamp",...}: message, compaction, model_change,
// thinking_level_change, session_info). Entries form a tree through
// ParentID (null for a root); the run
// context for a model call is the path from the root to a leaf
// (Session.Branch), rebuilt across compactions by Session.Context. An entry
// dropped from the run context (a failed assistant message removed before a
// retry) stays in the file: history is never rewritten.
//
// Crash safety: each Append writes all of its lines with one write call and
// fsyncs before returning, so only the last line can ever be incomplete.
// Load ignores an incomplete last line with a warning; Append truncates it
// away before writing. A complete line that is not a valid entry is skipped
// with a warning naming its line number, never fatal.
//
// Concurrency: several worker processes may append to one session (activity
// re-runs land on any worker of the machine). Append holds an exclusive
// flock(2) on the file, Load a shared one; a Store is also safe for
// concurrent use by goroutines. Workers on different machines must share the
// directory through a filesystem with working flock semantics.
//
// Performance: a Store caches each session it has read (entries, id set, and
// the file size and modification time they were read at). When the file only
// grew, Load and Append read just the new bytes; when it shrank, was replaced
// or was rewritten in place, they read it again from the start. The store
// itself never rewrites a file in place, except for truncating an incomplete
// last line.
package session
