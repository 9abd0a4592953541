package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// Entry types.
const (
	// TypeMessage entries carry one conversation message.
	TypeMessage = "message"
	// TypeCompaction entries record that the context before them was
	// summarised.
	TypeCompaction = "compaction"
)

// HeaderType is the Type of a session file's first line.
const HeaderType = "session"

// FormatVersion is the file format version this package writes. Files with
// a newer version are refused rather than misread.
const FormatVersion = 1

// maxIDLen bounds session ids so that <id>.jsonl fits any filesystem's name
// limit with room to spare.
const maxIDLen = 128

// ErrNotFound is returned (wrapped with the session id) by Load when the
// session has no file or no complete header yet.
var ErrNotFound = errors.New("session not found")

// Header is the first line of a session file.
type Header struct {
	// Type is always HeaderType ("session").
	Type      string    `json:"type"`
	Version   int       `json:"version"`
	ID        string    `json:"id"`
	Timestamp time.Time `json:"timestamp"`
	// Cwd is the session's workspace on the worker host that created it
	// (the terminal agent's header field of the same name); "" for
	// sessions created before workspaces existed.
	Cwd string `json:"cwd,omitempty"`
	// Host is the worker host that holds the workspace when tools are
	// placed by host (tools.placement host): the session's tool calls run
	// there. "" when any worker may run them.
	Host string `json:"host,omitempty"`
}

// Entry is one line of a session file after the header.
type Entry struct {
	// Type is TypeMessage or TypeCompaction.
	Type string `json:"type"`
	// ID is unique within the session and chosen by the caller (the
	// workflow, deterministically), which is what makes Append idempotent.
	ID string `json:"id"`
	// ParentID is the previous entry on this entry's branch ("" for a root).
	ParentID  string         `json:"parentId,omitempty"`
	Timestamp time.Time      `json:"timestamp"`
	Message   *agent.Message `json:"message,omitempty"`

	// Summary, FirstKeptEntryID and TokensBefore are set on compaction
	// entries: the summary replaces every message on the branch before
	// FirstKeptEntryID.
	Summary          string `json:"summary,omitempty"`
	FirstKeptEntryID string `json:"firstKeptEntryId,omitempty"`
	TokensBefore     int    `json:"tokensBefore,omitempty"`
}

// ValidateID checks that sessionID can name a session file: 1 to 128
// characters of [A-Za-z0-9._-], and not "." or "..". Anything else could
// escape the session directory or be unportable as a file name.
func ValidateID(sessionID string) error {
	switch {
	case sessionID == "":
		return errors.New("invalid session id: empty")
	case len(sessionID) > maxIDLen:
		return fmt.Errorf("invalid session id %q: %d characters, at most %d allowed",
			sessionID[:32]+"...", len(sessionID), maxIDLen)
	case sessionID == "." || sessionID == "..":
		return fmt.Errorf("invalid session id %q: not a file name", sessionID)
	}
	for i := 0; i < len(sessionID); i++ {
		if !idByte(sessionID[i]) {
			return fmt.Errorf("invalid session id %q: character %q at offset %d; only letters, digits, '.', '_' and '-' are allowed",
				sessionID, sessionID[i], i)
		}
	}
	return nil
}

func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-'
}

// validateEntry checks what Append requires of an entry before it may reach
// the file.
func validateEntry(e Entry) error {
	if e.ID == "" {
		return fmt.Errorf("entry of type %q has an empty id", e.Type)
	}
	switch e.Type {
	case TypeMessage:
		if e.Message == nil {
			return fmt.Errorf("message entry %q has no message", e.ID)
		}
	case TypeCompaction:
	default:
		return fmt.Errorf("entry %q has unknown type %q (want %q or %q)", e.ID, e.Type, TypeMessage, TypeCompaction)
	}
	if e.ParentID == e.ID {
		return fmt.Errorf("entry %q names itself as its parent", e.ID)
	}
	return nil
}

// checkLoaded is the read-side check: an entry without an id cannot be
// referenced and a message entry without a message cannot be sent, so both
// are skipped. Unknown types are kept so that entries written by a newer
// version still link their branch together.
func checkLoaded(e Entry) error {
	if e.ID == "" {
		return errors.New("entry has no id")
	}
	if e.Type == TypeMessage && e.Message == nil {
		return fmt.Errorf("message entry %q has no message", e.ID)
	}
	return nil
}
