package session

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

func TestValidateID(t *testing.T) {
	tests := []struct {
		name    string
		id      string
		wantErr string // substring; "" means valid
	}{
		{"plain", "s1", ""},
		{"all allowed characters", "Ab-9_x.y", ""},
		{"longest allowed", strings.Repeat("a", 128), ""},
		{"dots inside a name", "..x", ""},
		{"empty", "", "empty"},
		{"too long", strings.Repeat("a", 129), "129 characters, at most 128"},
		{"path traversal", "../x", `"../x"`},
		{"slash", "a/b", `character '/' at offset 1`},
		{"backslash", `a\b`, `character '\\'`},
		{"dot", ".", "not a file name"},
		{"dot dot", "..", "not a file name"},
		{"space", "a b", "character ' '"},
		{"newline", "a\nb", `"a\nb"`},
		{"non-ASCII", "sesión", "only letters, digits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateID(tt.id)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ValidateID(%q) = %v, want nil", tt.id, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ValidateID(%q) = nil, want an error containing %q", tt.id, tt.wantErr)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantErr) || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "invalid session id") {
				t.Fatalf("ValidateID(%q) = %q, want one line starting with \"invalid session id\" containing %q", tt.id, msg, tt.wantErr)
			}
			if len(msg) > 200 {
				t.Fatalf("ValidateID error is %d bytes long, want a short line: %q", len(msg), msg)
			}
		})
	}
}

func TestAppend_RejectsInvalidEntriesAndWritesNothing(t *testing.T) {
	good := msgEntry("a", "", "user", "hi")
	tests := []struct {
		name    string
		entries []Entry
		wantErr string
	}{
		{"empty id", []Entry{good, {Type: TypeCompaction, Summary: "s"}}, "empty id"},
		{"unknown type", []Entry{{Type: "note", ID: "n"}}, `unknown type "note"`},
		{"empty type", []Entry{{ID: "n"}}, `unknown type ""`},
		{"message entry without message", []Entry{{Type: TypeMessage, ID: "m"}}, `message entry "m" has no message`},
		{"own parent", []Entry{msgEntry("x", "x", "user", "loop")}, "names itself as its parent"},
		{"unencodable tool arguments", []Entry{good, {Type: TypeMessage, ID: "t", Message: &agent.Message{
			Role: agent.RoleAssistant, Content: []agent.ContentBlock{{Type: "toolCall",
				ToolCall: &agent.ToolCall{ID: "1", Name: "bash", Arguments: json.RawMessage(`{bad`)}}},
		}}}, `encode entry "t"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			n, err := st.Append("s", tt.entries...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), `session "s"`) {
				t.Fatalf("Append = (%d, %v), want an error naming the session and containing %q", n, err, tt.wantErr)
			}
			if _, err := os.Stat(st.Path("s")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("session file after a rejected Append: %v, want none created", err)
			}
		})
	}
}

func TestAppend_InvalidSessionIDIsRejected(t *testing.T) {
	st := openStore(t)
	for _, id := range []string{"../x", "", "a/b"} {
		if _, err := st.Append(id, msgEntry("a", "", "user", "hi")); err == nil || !strings.Contains(err.Error(), "invalid session id") {
			t.Errorf("Append(%q) error = %v, want an invalid session id error", id, err)
		}
		if _, err := st.Load(id); err == nil || !strings.Contains(err.Error(), "invalid session id") {
			t.Errorf("Load(%q) error = %v, want an invalid session id error", id, err)
		}
	}
}
