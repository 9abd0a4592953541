package activities

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/durableagent/durableagent/internal/checkpoint"
	"github.com/durableagent/durableagent/internal/session"
)

// CheckpointName is the registered name of Checkpoint.
const CheckpointName = "Checkpoint"

// EvidenceHead starts the evidence added to an unknown outcome's result;
// the changes follow, or EvidenceNone. At most MaxBashFiles paths and
// MaxEvidenceDiff bytes of diff.
const (
	EvidenceHead    = "\n\nThe workspace since the checkpoint taken before this turn's tool calls (this call's changes and those of the turn's calls before it): "
	EvidenceNone    = "no file changed."
	MaxEvidenceDiff = 4 << 10
	// MaxBashFiles bounds RunToolResult.Files of a bash call.
	MaxBashFiles = 50
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

// CheckpointInput names where the conversation is when a checkpoint is
// taken (Leaf) and the calls since the last one ("bash make"); Existing
// takes one only where the session's store exists (a first checkpoint
// hashes every file). With Since it takes none and reports what changed
// since that checkpoint (Evidence).
type CheckpointInput struct {
	SessionID string   `json:"sessionId"`
	Workspace string   `json:"workspace"`
	Leaf      string   `json:"leaf,omitempty"`
	Calls     []string `json:"calls,omitempty"`
	Existing  bool     `json:"existing,omitempty"`
	Since     string   `json:"since,omitempty"`
}

// CheckpointResult is the checkpoint's id, or why none was taken (a
// checkpoint never fails the turn), or the evidence asked for.
type CheckpointResult struct {
	ID       string `json:"id,omitempty"`
	Warning  string `json:"warning,omitempty"`
	Evidence string `json:"evidence,omitempty"`
}

// Checkpoint records the session's workspace for the coming turn's tool
// calls (docs/spec.md 20), on its tool host, into CheckpointDir; its id is
// in history, so a replay sees the same ids. Files equal to the newest
// checkpoint's give that one (checkpoint.Store.Next), so a retry gets the
// checkpoint its first attempt took.
func (a *Activities) Checkpoint(ctx context.Context, in CheckpointInput) (CheckpointResult, error) {
	if err := session.ValidateID(in.SessionID); err != nil {
		return CheckpointResult{}, badInput(err)
	}
	h := a.startHeartbeat(ctx, nil)
	defer h.stop()
	switch {
	case in.Since != "":
		return CheckpointResult{Evidence: a.evidence(ctx, in)}, nil
	case a.Checkpoints.DataDir == "" || a.Checkpoints.Off:
		return CheckpointResult{}, nil
	case in.Existing:
		if _, err := os.Stat(CheckpointDir(a.Checkpoints.DataDir, in.SessionID)); err != nil {
			return CheckpointResult{}, nil
		}
	}
	st, err := a.checkpointStore(in.SessionID, in.Workspace)
	var c checkpoint.Checkpoint
	if err == nil {
		c, err = st.Next(ctx, in.Workspace, checkpoint.Turn{Leaf: in.Leaf, Calls: in.Calls})
	}
	if err != nil {
		return CheckpointResult{Warning: "checkpoint not taken: " + err.Error()}, nil
	}
	return CheckpointResult{ID: c.ID}, nil
}

// checkpointStore opens the session's store, for a workspace the worker
// may work in.
func (a *Activities) checkpointStore(sessionID, workspace string) (*checkpoint.Store, error) {
	if err := a.checkWorkspace(workspace); err != nil {
		return nil, err
	}
	return checkpoint.Open(CheckpointDir(a.Checkpoints.DataDir, sessionID), a.Checkpoints.Limits)
}

// changesSince lists what changed in the workspace since checkpoint from.
func (a *Activities) changesSince(ctx context.Context, sessionID, workspace, from string) (*checkpoint.Store, []checkpoint.Change, error) {
	st, err := a.checkpointStore(sessionID, workspace)
	if err != nil {
		return nil, nil, err
	}
	changes, err := st.Changes(ctx, workspace, from, "")
	return st, changes, err
}

// evidence says what the workspace changed since checkpoint in.Since:
// the text added to the result of a call whose outcome is unknown
// (docs/spec.md 20.3), redacted as tool output is.
func (a *Activities) evidence(ctx context.Context, in CheckpointInput) string {
	st, changes, err := a.changesSince(ctx, in.SessionID, in.Workspace, in.Since)
	switch {
	case err != nil:
		return EvidenceHead + "not readable (" + err.Error() + ")."
	case len(changes) == 0:
		return EvidenceHead + EvidenceNone
	}
	paths := make([]string, 0, min(len(changes), MaxBashFiles))
	for _, c := range changes[:cap(paths)] {
		paths = append(paths, c.Kind+" "+c.Path)
	}
	text := EvidenceHead + strings.Join(paths, ", ")
	if n := len(changes) - len(paths); n > 0 {
		text += fmt.Sprintf(" and %d more", n)
	}
	text += "."
	if d, err := st.Diff(ctx, in.Workspace, in.Since, "", MaxEvidenceDiff); err == nil && d != "" {
		text += "\n" + d
	}
	return a.outputRedactor(ctx).known(text)
}

// filesSince lists the paths changed in the workspace since the turn's
// checkpoint (sorted, at most MaxBashFiles, with the count of the rest),
// or says why it cannot: a sub-agent's bash account (SPEC 17.9).
func (a *Activities) filesSince(ctx context.Context, in RunToolInput) (files []string, more int, note string) {
	if in.Checkpoint == "" {
		return nil, 0, "the turn has no checkpoint"
	}
	_, changes, err := a.changesSince(ctx, in.SessionID, in.Workspace, in.Checkpoint)
	if err != nil {
		return nil, 0, "the checkpoint is not readable: " + err.Error()
	}
	for _, c := range changes[:min(len(changes), MaxBashFiles)] {
		files = append(files, c.Path)
	}
	return files, len(changes) - len(files), ""
}
