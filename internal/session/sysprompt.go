package session

import "encoding/json"

// CustomSystemPrompt is the CustomType of the custom entry that records
// a session's system prompt (its Data is a SystemPromptRecord). The text
// itself is kept beside the session (PutAside under SystemPromptKey):
// every model call of the session sends it, and Temporal history never
// carries it.
const CustomSystemPrompt = "system_prompt"

// SystemPromptKey is the aside key of a session's system prompt text.
const SystemPromptKey = "system-prompt"

// SystemPromptRecord is what the session file says of its system prompt.
type SystemPromptRecord struct {
	// Hash is the hex SHA-256 of the text.
	Hash string `json:"hash"`
	// Bytes is the text's length.
	Bytes int `json:"bytes"`
	// Sources are where the text came from: the paths of the project
	// instruction files, and the settings that shaped it.
	Sources []string `json:"sources,omitempty"`
}

// SystemPromptEntry is the custom entry recording rec, with the entry id
// derived from the hash (so re-recording the same text is a no-op).
func SystemPromptEntry(rec SystemPromptRecord, parentID string) (Entry, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return Entry{}, err
	}
	id := "sp-" + rec.Hash
	if len(rec.Hash) > 16 {
		id = "sp-" + rec.Hash[:16]
	}
	return Entry{Type: TypeCustom, ID: id, ParentID: parentID, CustomType: CustomSystemPrompt, Data: data}, nil
}

// SystemPrompt returns the session's last system prompt record (ok is
// false when it has none: a session begun before system prompts were
// recorded, or one that has run no prompt yet).
func (s *Session) SystemPrompt() (rec SystemPromptRecord, ok bool) {
	for i := len(s.Entries) - 1; i >= 0; i-- {
		e := s.Entries[i]
		if e.Type == TypeCustom && e.CustomType == CustomSystemPrompt && json.Unmarshal(e.Data, &rec) == nil {
			return rec, true
		}
	}
	return SystemPromptRecord{}, false
}
