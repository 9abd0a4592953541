package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
	// TypeModelChange records that the session's model changed (RPC
	// set_model, cycle_model): Provider and ModelID.
	TypeModelChange = "model_change"
	// TypeThinkingLevelChange records that the session's thinking level
	// changed (RPC set_thinking_level): ThinkingLevel.
	TypeThinkingLevelChange = "thinking_level_change"
	// TypeSessionInfo sets the session's display name (RPC
	// set_session_name): Name; the latest one in the file counts and an
	// empty name clears it.
	TypeSessionInfo = "session_info"
	// TypeCustom entries hold the product's own data that is not
	// conversation (the terminal agent's custom entry, which it keeps
	// out of the model's context): CustomType says what, Data holds it.
	TypeCustom = "custom"
)

// entryTypes are the types Append accepts, in the order error messages
// list them. The entries besides messages and compactions are not part of
// the run context; they link the branch together like any entry.
var entryTypes = []string{TypeMessage, TypeCompaction, TypeModelChange, TypeThinkingLevelChange, TypeSessionInfo, TypeCustom}

// HeaderType is the Type of a session file's first line.
const HeaderType = "session"

// FormatVersion is the file format version this package writes: 3, the
// terminal agent's current session version (a tree of entries linked by
// id and parentId), so its readers load our files without migrating them.
// Files of versions 1 and 2, which this package wrote before, have the
// same layout and read unchanged. Files with a newer version are refused
// rather than misread.
const FormatVersion = 3

// MaxIDLen bounds session ids so that <id>.jsonl fits any filesystem's name
// limit with room to spare.
const MaxIDLen = 128

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
	// Worktree is set when the session was created with a git worktree
	// of its own (starter prompt --worktree): Cwd is in Worktree.Dir.
	Worktree *Worktree `json:"worktree,omitempty"`
	// ParentSession is set on a sub-agent's session (the task tool): the
	// session whose prompt started it.
	ParentSession string `json:"parentSession,omitempty"`
}

// Worktree records a session's git worktree (internal/worktree): where it
// is, its branch, the commit the branch was made from and the repository
// it belongs to, all on the worker host that created the session.
type Worktree struct {
	Dir    string `json:"dir"`
	Branch string `json:"branch"`
	Base   string `json:"base"`
	Repo   string `json:"repo"`
}

// Entry is one line of a session file after the header: the terminal
// agent's {type, id, parentId, timestamp, ...} (a root's parentId is
// written as null).
type Entry struct {
	// Type is one of TypeMessage, TypeCompaction, TypeModelChange,
	// TypeThinkingLevelChange, TypeSessionInfo or TypeCustom.
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
	// Usage is what a compaction's summary calls were billed (Spent).
	Usage *agent.Usage `json:"usage,omitempty"`

	// Provider and ModelID are set on model_change entries.
	Provider string `json:"provider,omitempty"`
	ModelID  string `json:"modelId,omitempty"`
	// ThinkingLevel is set on thinking_level_change entries (off,
	// minimal, low, medium, high, xhigh, max).
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
	// Name is the display name of a session_info entry.
	Name string `json:"name,omitempty"`
	// CustomType and Data are set on custom entries (CustomSystemPrompt).
	CustomType string          `json:"customType,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
}

// entryFields is Entry without its methods.
type entryFields Entry

// MarshalJSON writes the entry with a root's parentId as null and a
// session_info's name even when empty (it clears the name), as the
// terminal agent writes them.
func (e Entry) MarshalJSON() ([]byte, error) {
	var parent *string
	if e.ParentID != "" {
		parent = &e.ParentID
	}
	var name *string
	if e.Type == TypeSessionInfo {
		name = &e.Name
	}
	return agent.MarshalPlain(struct {
		Type     string  `json:"type"`
		ID       string  `json:"id"`
		ParentID *string `json:"parentId"`
		entryFields
		Name *string `json:"name,omitempty"`
	}{e.Type, e.ID, parent, entryFields(e), name})
}

// UnmarshalJSON reads an entry; a null parentId is a root.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var w struct {
		entryFields
		ParentID *string `json:"parentId"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			te.Field = strings.TrimPrefix(te.Field, "entryFields.")
		}
		return err
	}
	*e = Entry(w.entryFields)
	e.ParentID = ""
	if w.ParentID != nil {
		e.ParentID = *w.ParentID
	}
	return nil
}

// ValidateID checks that sessionID can name a session file: 1 to 128
// characters of [A-Za-z0-9._-], and not "." or "..". Anything else could
// escape the session directory or be unportable as a file name.
func ValidateID(sessionID string) error {
	switch {
	case sessionID == "":
		return errors.New("invalid session id: empty")
	case len(sessionID) > MaxIDLen:
		return fmt.Errorf("invalid session id %q: %d characters, at most %d allowed",
			sessionID[:32]+"...", len(sessionID), MaxIDLen)
	case sessionID == "." || sessionID == "..":
		return fmt.Errorf("invalid session id %q: not a file name", sessionID)
	}
	for i := 0; i < len(sessionID); i++ {
		if c := sessionID[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("invalid session id %q: character %q at offset %d; only letters, digits, '.', '_' and '-' are allowed",
				sessionID, sessionID[i], i)
		}
	}
	return nil
}

// validateEntry checks what Append requires of an entry before it may be
// stored: an id, a known type, a message on message entries, and no entry
// that names itself as its parent.
func validateEntry(e Entry) error {
	if e.ID == "" {
		return fmt.Errorf("entry of type %q has an empty id", e.Type)
	}
	switch e.Type {
	case TypeMessage:
		if e.Message == nil {
			return fmt.Errorf("message entry %q has no message", e.ID)
		}
	case TypeCompaction, TypeSessionInfo:
	case TypeModelChange:
		if e.Provider == "" || e.ModelID == "" {
			return fmt.Errorf("model_change entry %q needs a provider and a modelId", e.ID)
		}
	case TypeThinkingLevelChange:
		if e.ThinkingLevel == "" {
			return fmt.Errorf("thinking_level_change entry %q has no thinkingLevel", e.ID)
		}
	case TypeCustom:
		if e.CustomType == "" {
			return fmt.Errorf("custom entry %q has no customType", e.ID)
		}
	default:
		return fmt.Errorf("entry %q has unknown type %q (want one of %s)", e.ID, e.Type, strings.Join(entryTypes, ", "))
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
