package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/durableagent/durableagent/agent"
)

// The functions below let another session store (package internal/pgstore
// keeps sessions in PostgreSQL) share this package's rules, so that both
// stores accept, reject and read entries alike and hand the workflow a
// *Session whose Context, Branch and LeafID are the ones implemented here.

// EncodeEntries checks what Append requires of sessionID and entries
// (ValidateID, validateEntry) and renders each entry as Append writes it:
// one line of JSON without the newline, HTML characters left unescaped.
// Its error names the session and, for a bad entry, the entry.
func EncodeEntries(sessionID string, entries []Entry) ([][]byte, error) {
	if err := ValidateID(sessionID); err != nil {
		return nil, fmt.Errorf("append to session: %w", err)
	}
	lines := make([][]byte, len(entries))
	for i, e := range entries {
		if err := validateEntry(e); err != nil {
			return nil, fmt.Errorf("append to session %q: %w", sessionID, err)
		}
		line, err := agent.MarshalPlain(e)
		if err != nil {
			return nil, fmt.Errorf("append to session %q: encode entry %q: %w", sessionID, e.ID, err)
		}
		lines[i] = line
	}
	return lines, nil
}

// DecodeEntry parses one stored entry the way Load reads a line of a
// session file. An error says why the entry is to be skipped (not JSON,
// a field of the wrong type, no id, a message entry without a message);
// Load turns it into a warning rather than failing the session.
func DecodeEntry(data []byte) (Entry, error) {
	var e Entry
	if err := json.Unmarshal(bytes.TrimSpace(data), &e); err != nil {
		return Entry{}, fmt.Errorf("%s", describeJSONError(err))
	}
	if err := checkLoaded(e); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// exportHeader is the header line of an export: the session's header
// and, when the session keeps one, its system prompt text (PutAside
// under SystemPromptKey), which the session file itself never holds.
// A store's Load ignores the extra field, so an export still reads as a
// session file.
type exportHeader struct {
	Header
	SystemPrompt *string `json:"systemPrompt,omitempty"`
}

// WriteExport writes sess in the session file format (the exchange format
// of starter session export): its header, with this package's type and
// version, then one line per entry, as Append writes them. The kept
// system prompt text (nil: none) goes in the header line's systemPrompt
// field, so that an imported session's model calls send the text its
// system_prompt record names instead of building a new one (spec 7.6).
func WriteExport(w io.Writer, sess *Session, systemPrompt []byte) error {
	bw := bufio.NewWriter(w)
	h := exportHeader{Header: sess.Header}
	h.Type, h.Version = HeaderType, FormatVersion
	if systemPrompt != nil {
		text := string(systemPrompt)
		h.SystemPrompt = &text
	}
	line, err := encodeLine(h)
	if err != nil {
		return err
	}
	bw.Write(line)
	for _, e := range sess.Entries {
		if line, err = encodeLine(e); err != nil {
			return fmt.Errorf("encode entry %q: %w", e.ID, err)
		}
		bw.Write(line)
	}
	return bw.Flush()
}

// DecodeExportHeader parses the header line of a session file or an
// export: the header, and the kept system prompt text the export carries
// (nil when it has none).
func DecodeExportHeader(line []byte) (Header, []byte, error) {
	var h exportHeader
	if err := json.Unmarshal(bytes.TrimSpace(line), &h); err != nil || h.Type != HeaderType {
		return Header{}, nil, fmt.Errorf("line 1 is not a session header (want a JSON object with \"type\":%q)", HeaderType)
	}
	if h.SystemPrompt == nil {
		return h.Header, nil, nil
	}
	return h.Header, []byte(*h.SystemPrompt), nil
}
