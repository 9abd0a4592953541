package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/durableagent/durableagent/internal/checkpoint"
	"github.com/durableagent/durableagent/internal/session"
)

// Checkpoints of a session's workspace (docs/spec.md 20): one before each
// turn whose tool calls may change files, taken on the session's tool
// host into CheckpointDir (internal/checkpoint). Its id is the activity's
// result, so a replay sees the same ids.

// Registered names of the checkpoint activities.
const (
	CheckpointName         = "Checkpoint"
	CheckpointEvidenceName = "CheckpointEvidence"
)

// EvidenceHead starts the evidence added to an unknown outcome's result;
// the changes follow, or EvidenceNone.
const (
	EvidenceHead = "\n\nThe workspace since the checkpoint taken before this turn's tool calls (this call's changes and those of the turn's calls before it): "
	EvidenceNone = "no file changed."
)

// Bounds of the evidence an unknown outcome's result carries.
const (
	MaxEvidencePaths = 50
	MaxEvidenceDiff  = 4 << 10
)

// Checkpoints is the worker's checkpoint policy (settings checkpoints.*).
type Checkpoints struct {
	// DataDir holds the stores (<DataDir>/checkpoints/<session>; "":
	// none); Off: Checkpoint takes none (checkpoints.enabled false).
	DataDir string
	Off     bool
	Limits  checkpoint.Limits
}

// CheckpointDir is the store of a session's checkpoints.
func CheckpointDir(dataDir, sessionID string) string {
	return filepath.Join(dataDir, "checkpoints", sessionID)
}

// CheckpointInput names the turn a checkpoint is taken before.
type CheckpointInput struct {
	SessionID string `json:"sessionId"`
	Workspace string `json:"workspace"`
	// EntryID is the assistant entry whose tool calls follow; Calls name
	// them ("bash make test"), for starter checkpoints.
	EntryID string   `json:"entryId"`
	Calls   []string `json:"calls,omitempty"`
}

// CheckpointResult is the checkpoint's id, or why none was taken (a
// checkpoint never fails the turn).
type CheckpointResult struct {
	ID      string `json:"id,omitempty"`
	Warning string `json:"warning,omitempty"`
}

// CheckpointLabel is the label of a checkpoint in the store (JSON): N
// numbers a session's checkpoints from 1 and stays when older ones are
// pruned, so `starter rewind --to N` means the same checkpoint every time.
type CheckpointLabel struct {
	N       int      `json:"n"`
	EntryID string   `json:"entryId,omitempty"`
	Calls   []string `json:"calls,omitempty"`
}

// LabelOf reads a checkpoint's label (the zero label for a foreign one).
func LabelOf(c checkpoint.Checkpoint) CheckpointLabel {
	var l CheckpointLabel
	_ = json.Unmarshal([]byte(c.Label), &l)
	return l
}

// Checkpoint records the session's workspace before a turn's tool calls.
// A retry after the turn's checkpoint was taken returns that one.
func (a *Activities) Checkpoint(ctx context.Context, in CheckpointInput) (CheckpointResult, error) {
	if a.Checkpoints.DataDir == "" || a.Checkpoints.Off {
		return CheckpointResult{}, nil
	}
	if err := session.ValidateID(in.SessionID); err != nil {
		return CheckpointResult{}, badInput(err)
	}
	if err := a.checkWorkspace(in.Workspace); err != nil {
		return CheckpointResult{Warning: "checkpoint not taken: " + err.Error()}, nil
	}
	h := a.startHeartbeat(ctx, nil)
	defer h.stop()
	id, err := a.takeCheckpoint(ctx, in)
	if err != nil {
		return CheckpointResult{Warning: "checkpoint not taken: " + err.Error()}, nil
	}
	return CheckpointResult{ID: id}, nil
}

func (a *Activities) takeCheckpoint(ctx context.Context, in CheckpointInput) (string, error) {
	st, err := checkpoint.Open(CheckpointDir(a.Checkpoints.DataDir, in.SessionID), a.Checkpoints.Limits)
	if err != nil {
		return "", err
	}
	list, err := st.List(ctx)
	if err != nil {
		return "", err
	}
	label := CheckpointLabel{N: 1, EntryID: in.EntryID, Calls: in.Calls}
	if len(list) > 0 {
		last := list[len(list)-1]
		l := LabelOf(last)
		if l.EntryID == in.EntryID {
			return last.ID, nil
		}
		label.N = l.N + 1
	}
	b, _ := json.Marshal(label)
	c, err := st.Take(ctx, in.Workspace, string(b))
	return c.ID, err
}

// CheckpointEvidenceInput names the checkpoint a lost call's workspace is
// compared with.
type CheckpointEvidenceInput struct {
	SessionID string `json:"sessionId"`
	Workspace string `json:"workspace"`
	From      string `json:"from"`
}

// CheckpointEvidence says what the workspace changed since checkpoint
// in.From: the text added to the result of a call whose outcome is
// unknown (docs/spec.md 20.3), redacted as tool output is.
func (a *Activities) CheckpointEvidence(ctx context.Context, in CheckpointEvidenceInput) (string, error) {
	if err := session.ValidateID(in.SessionID); err != nil {
		return "", badInput(err)
	}
	h := a.startHeartbeat(ctx, nil)
	defer h.stop()
	head := EvidenceHead
	st, err := checkpoint.Open(CheckpointDir(a.Checkpoints.DataDir, in.SessionID), a.Checkpoints.Limits)
	var changes []checkpoint.Change
	if err == nil {
		changes, err = st.Changes(ctx, in.Workspace, in.From, "")
	}
	if err != nil {
		return head + "not readable (" + err.Error() + ").", nil
	}
	if len(changes) == 0 {
		return head + EvidenceNone, nil
	}
	var b strings.Builder
	b.WriteString(head)
	for i, c := range changes[:min(len(changes), MaxEvidencePaths)] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", c.Kind, c.Path)
	}
	if n := len(changes) - MaxEvidencePaths; n > 0 {
		fmt.Fprintf(&b, " and %d more", n)
	}
	b.WriteString(".")
	if d, err := st.Diff(ctx, in.Workspace, in.From, "", MaxEvidenceDiff); err == nil && d != "" {
		b.WriteString("\n" + d)
	}
	return a.outputRedactor(ctx).known(b.String()), nil
}
