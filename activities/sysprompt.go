package activities

import (
	"cmp"
	"os/exec"
	"runtime"
	"time"

	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/sysprompt"
	"github.com/durableagent/durableagent/internal/tools"
)

// beginSystemPrompt makes sure the session has its system prompt
// (docs/spec.md 7.6): the session's first prompt builds it, records its
// hash and sources in the session file as the child of leaf, and keeps
// the text beside the session; later prompts find it kept and change
// nothing. It returns the leaf the user message goes under and the hash.
//
// The record is written before the text is kept: a worker lost between
// the two builds the text again on the re-run, and its record (the same
// one, or a newer one if a file changed meanwhile) is the last in the
// file, as SystemPrompt reads it.
func (a *Activities) beginSystemPrompt(in BeginPromptInput, sess *session.Session, ws string, wsHere bool, leaf string) (string, string, error) {
	kept, err := a.Sessions.Aside(in.SessionID, session.SystemPromptKey)
	if err != nil {
		return "", "", storeError("read system prompt", err)
	}
	if kept != nil {
		return leaf, sysprompt.Hash(string(kept)), nil
	}
	facts := sysprompt.Facts{Workspace: ws, OS: runtime.GOOS + "/" + runtime.GOARCH, Shell: shellName(),
		Tools: in.Tools, Replace: in.SystemPrompt, Append: in.AppendSystemPrompt}
	if in.TimestampMs != 0 {
		facts.Date = time.UnixMilli(in.TimestampMs).UTC()
	}
	if wsHere && ws != "" && a.checkWorkspace(ws) == nil {
		// Only a workspace this worker may use, through the file system
		// the tools see (a sandbox's, when there is one).
		facts.Files = sysprompt.ProjectFiles(cmp.Or(a.ToolPolicy.Runner, tools.Local).FS(), ws)
	}
	text, sources := sysprompt.Build(facts)
	rec := session.SystemPromptRecord{Hash: sysprompt.Hash(text), Bytes: len(text), Sources: sources}
	entry, err := session.SystemPromptEntry(rec, leaf)
	if err != nil {
		return "", "", storeError("record system prompt", err)
	}
	if _, ok := sess.Get(entry.ID); ok {
		// Recorded already: by this call's lost first run (the record is
		// the leaf then), or in the session a fork copied (the record is
		// further up the branch, which must not move back to it).
		entry.ID = leaf
	} else if _, err := a.Sessions.Append(in.SessionID, entry); err != nil {
		return "", "", storeError("record system prompt", err)
	}
	if err := a.Sessions.PutAside(in.SessionID, session.SystemPromptKey, []byte(text)); err != nil {
		return "", "", storeError("keep system prompt", err)
	}
	return entry.ID, rec.Hash, nil
}

// systemPrompt is the session's kept system prompt ("" for a session
// begun before system prompts were kept).
func (a *Activities) systemPrompt(sessionID string) (string, error) {
	b, err := a.Sessions.Aside(sessionID, session.SystemPromptKey)
	if err != nil {
		return "", storeError("read system prompt", err)
	}
	return string(b), nil
}

// shellName is the shell bash commands run in: bash, or sh where there
// is no bash (tools.Command).
func shellName() string {
	if _, err := exec.LookPath("bash"); err != nil {
		return "sh"
	}
	return "bash"
}
