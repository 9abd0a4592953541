package activities

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/metrics"
	"github.com/durableagent/durableagent/internal/policy"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/tools"
	"github.com/durableagent/durableagent/internal/tracing"
)

// PreviewChars bounds the preview of a tool result that the workflow (and
// so Temporal history) keeps; the whole result is in the session entry.
const PreviewChars = 160

// argPreviewChars bounds each string argument in a tool call's preview.
const argPreviewChars = 200

// ToolPolicy is the worker's rule for where tools may act. It belongs to
// the worker, not to the prompt: a client cannot widen it.
type ToolPolicy struct {
	// AllowedRoots are the directories a session's workspace must be in
	// (tools.allowedRoots; empty: anywhere).
	AllowedRoots []string
	// Confine keeps file tools inside the workspace (tools.confine).
	Confine bool
	// EnvAllow names secret-looking variables bash may see all the same
	// (tools.envAllow).
	EnvAllow []string
	// RequireApproval names the tools whose calls wait for approval in
	// every prompt this worker starts (tools.workerRequireApproval):
	// BeginPrompt hands it to the workflow, which joins it to the
	// prompt's own list.
	RequireApproval []string
	// Runner runs the tools' commands and file accesses (nil:
	// tools.Local, the worker's own process): where a sandbox plugs in.
	Runner tools.Runner
}

// BeginPrompt starts a prompt in its session (a local activity): it
// creates the session with its workspace if it is new, checks the
// workspace against the worker's policy, and writes the user message as
// the child of the session's leaf. Re-running it is harmless: the user
// entry's id is the workflow's.
func (a *Activities) BeginPrompt(ctx context.Context, in BeginPromptInput) (BeginPromptResult, error) {
	if err := session.ValidateID(in.SessionID); err != nil {
		return BeginPromptResult{}, badInput(err)
	}
	ws := in.Workspace
	if ws != "" {
		abs, err := filepath.Abs(ws)
		if err != nil {
			return BeginPromptResult{}, workspaceError("workspace %q: %v", ws, err)
		}
		ws = abs
	}
	// The problems of the file as found: Init and the user message's
	// write repair a torn last line, whose warning would be lost with it.
	// (Errors are Init's and Load's to report below.)
	var found []string
	before, loadErr := a.Sessions.Load(in.SessionID)
	if loadErr == nil {
		found = slices.Clone(before.Warnings) // appended to below
	}
	where := session.Header{Cwd: ws, Host: cmp.Or(in.ToolHost, a.ToolHost), ParentSession: in.ParentSession}
	if in.Worktree != "" {
		switch {
		case loadErr == nil && before.Header.Worktree == nil && in.Worktree == WorktreeRequired:
			return BeginPromptResult{}, workspaceError("session %s exists without a worktree (workspace %s): --worktree gives a new session one; start a new session or drop --worktree",
				in.SessionID, before.Header.Cwd)
		case errors.Is(loadErr, session.ErrNotFound):
			wt, err := a.makeWorktree(ctx, in.SessionID, ws)
			if err != nil {
				return BeginPromptResult{}, err
			}
			where.Cwd, where.Worktree = wt.Workspace, &session.Worktree{Dir: wt.Dir, Branch: wt.Branch, Base: wt.Base, Repo: wt.Repo}
		}
	}
	hdr, err := a.Sessions.Init(in.SessionID, where)
	if err != nil {
		return BeginPromptResult{}, storeError("open session", err)
	}
	ws = cmp.Or(hdr.Cwd, ws)
	// The workspace is checked where it lives: here, unless the session
	// is held by another host (its tool calls check it there).
	wsHere := hdr.Host == "" || a.ToolHost == "" || hdr.Host == a.ToolHost
	if in.NeedWorkspace && wsHere {
		if err := a.checkWorkspace(ws); err != nil {
			return BeginPromptResult{}, err
		}
	}
	if in.UserEntryID != "" && len(in.Faults)+len(in.SummaryFaults) > 0 {
		f := faultScripts{Faults: in.Faults, SummaryFaults: in.SummaryFaults}
		if err := a.keepAside(in.SessionID, in.UserEntryID, "fault script", f); err != nil {
			return BeginPromptResult{}, err
		}
	}
	sess, err := a.Sessions.Load(in.SessionID)
	if err != nil {
		return BeginPromptResult{}, storeError("load session", err)
	}
	leaf := sess.LeafID()
	var promptHash string
	if in.UserEntryID != "" {
		if leaf, promptHash, err = a.beginSystemPrompt(in, sess, ws, wsHere, leaf); err != nil {
			return BeginPromptResult{}, err
		}
		if e, ok := sess.Get(in.UserEntryID); ok {
			leaf = e.ID // a re-run: the user message is already there
		} else {
			user := agent.TextMessage(agent.RoleUser, in.Message)
			user.Content = append(user.Content, in.Images...)
			user.Timestamp = in.TimestampMs
			entry := session.Entry{Type: session.TypeMessage, ID: in.UserEntryID, ParentID: leaf,
				Timestamp: time.UnixMilli(in.TimestampMs).UTC(), Message: &user}
			if _, err := a.Sessions.Append(in.SessionID, entry); err != nil {
				return BeginPromptResult{}, storeError("write user message", err)
			}
			leaf = in.UserEntryID
			if sess, err = a.Sessions.Load(in.SessionID); err != nil {
				return BeginPromptResult{}, storeError("load session", err)
			}
		}
	}
	warnings := found
	for _, w := range sess.Warnings {
		if !slices.Contains(found, w) {
			warnings = append(warnings, w)
		}
	}
	for _, w := range warnings {
		activity.GetLogger(ctx).Warn("session file problem", "session", in.SessionID, "warning", w)
	}
	var grants []policy.Grant
	if err := a.readAside(in.SessionID, grantsKey, "session grants", &grants); err != nil {
		return BeginPromptResult{}, err
	}
	res := BeginPromptResult{LeafID: leaf, MessageCount: len(sess.Context(leaf)), Workspace: ws,
		Warnings: warnings, RequireApproval: a.ToolPolicy.RequireApproval, Grants: grants,
		SystemPromptHash: promptHash, Worktree: hdr.Worktree != nil, ModelQueues: a.ModelQueues}
	if in.SessionUsage {
		spent, _ := session.Spent(sess)
		res.SessionSpent = &spent
	}
	if a.ToolHost != "" {
		// Host placement: the session's tools run where its workspace is,
		// the host recorded at its creation. A session created under
		// placement any has none and keeps running its tools anywhere.
		res.ToolHost = hdr.Host
	}
	return res, nil
}

// checkWorkspace refuses a workspace that is missing, not a directory or
// outside tools.allowedRoots.
func (a *Activities) checkWorkspace(ws string) error {
	if ws == "" {
		return workspaceError("the session has no workspace: start it with a workspace (starter prompt --workspace DIR)")
	}
	fi, err := os.Stat(ws)
	if err != nil {
		return workspaceError("workspace %s: %v", ws, errors.Unwrap(err))
	}
	if !fi.IsDir() {
		return workspaceError("workspace %s is not a directory", ws)
	}
	if len(a.ToolPolicy.AllowedRoots) == 0 {
		return nil
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		real = ws
	}
	roots := a.ToolPolicy.AllowedRoots
	if a.WorktreeDir != "" {
		// The worker's own worktrees, made of workspaces it allowed.
		roots = append(slices.Clip(roots), a.WorktreeDir)
	}
	for _, root := range roots {
		r, err := filepath.Abs(root)
		if err != nil {
			continue
		}
		if rr, err := filepath.EvalSymlinks(r); err == nil {
			r = rr
		}
		if real == r || strings.HasPrefix(real, r+string(filepath.Separator)) {
			return nil
		}
	}
	return workspaceError("workspace %s is outside tools.allowedRoots (%s): add it to tools.allowedRoots in the worker's settings",
		ws, strings.Join(a.ToolPolicy.AllowedRoots, ", "))
}

func workspaceError(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), ErrTypeWorkspace, nil)
}

// RecordEntry writes an entry unless its id is in the session already (a
// local activity), and describes the entry that stands, so the workflow
// can use what an activity wrote before its worker was lost.
func (a *Activities) RecordEntry(ctx context.Context, in RecordEntryInput) (RecordEntryResult, error) {
	if err := session.ValidateID(in.SessionID); err != nil {
		return RecordEntryResult{}, badInput(err)
	}
	n, err := a.Sessions.Append(in.SessionID, in.Entry)
	if err != nil {
		return RecordEntryResult{}, storeError("append to session", err)
	}
	res := RecordEntryResult{Written: n > 0}
	if n > 0 {
		return res, nil
	}
	sess, err := a.Sessions.Load(in.SessionID)
	if err != nil {
		return RecordEntryResult{}, storeError("load session", err)
	}
	e, ok := sess.Get(in.Entry.ID)
	if !ok || e.Message == nil {
		return res, nil
	}
	switch e.Message.Role {
	case agent.RoleAssistant:
		m := resultOf(e.ID, *e.Message, "")
		res.Model = &m
	case agent.RoleToolResult:
		t := toolResultOf(e.ID, *e.Message, true)
		res.Tool = &t
	}
	return res, nil
}

// RunTool runs one tool call in the session's workspace and writes its
// toolResult message under in.ResultEntryID before returning. A re-run
// (the worker died after the effect, before Temporal recorded the
// completion) finds the result entry and returns it without acting again.
// The call's arguments are read from the assistant entry, so history
// carries ids only.
func (a *Activities) RunTool(ctx context.Context, in RunToolInput) (RunToolResult, error) {
	sess, err := a.load(in.SessionID)
	if err != nil {
		return RunToolResult{}, err
	}
	if e, ok := sess.Get(in.ResultEntryID); ok && e.Message != nil {
		return toolResultOf(e.ID, *e.Message, true), nil
	}
	call, err := findToolCall(sess, in.AssistantEntryID, in.ToolCallID)
	if err != nil {
		return RunToolResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	var res tools.Result
	track := in.TrackFiles && call.Name == tools.Bash
	switch {
	case !tools.Enabled(in.Tools.Enabled, call.Name):
		res = tools.Result{IsError: true, Content: tools.NotEnabled(in.Tools.Enabled, call.Name)}
	case !json.Valid(call.Arguments) || !strings.HasPrefix(strings.TrimSpace(string(call.Arguments)), "{"):
		res = tools.Result{IsError: true, Content: fmt.Sprintf("Invalid arguments for %s: the model sent %s, which is not a JSON object; call the tool again with valid JSON arguments",
			call.Name, line.Cut(string(call.Arguments), 200))}
	default:
		if err := a.checkWorkspace(in.Workspace); err != nil {
			return RunToolResult{}, err
		}
		res = a.execute(ctx, call, in)
	}
	metrics.ToolCall(ctx, call.Name, res.IsError)
	tracing.ToolCall(ctx, call.Name, res)
	if cancelledWithoutAbort(ctx) {
		// Not an abort (the command, if any, was killed all the same):
		// write nothing, so the workflow's record of the lost call stands
		// (cutError); a stored "aborted" would tell the model the user
		// aborted it.
		return RunToolResult{}, cutError(ctx, call.Name)
	}
	msg := agent.Message{Role: agent.RoleToolResult, ToolCallID: call.ID, ToolName: call.Name,
		IsError: res.IsError, Content: append([]agent.ContentBlock{{Type: "text", Text: res.Content}}, res.Images...),
		Timestamp: time.Now().UnixMilli()}
	entry := session.Entry{Type: session.TypeMessage, ID: in.ResultEntryID, ParentID: in.ParentID,
		Timestamp: time.Now().UTC(), Message: &msg}
	if _, err := a.Sessions.Append(in.SessionID, entry); err != nil {
		return RunToolResult{}, storeError("write tool result", err)
	}
	out := toolResultOf(in.ResultEntryID, msg, false)
	if track {
		out.Files, out.FilesMore, out.FilesNote = a.filesSince(context.WithoutCancel(ctx), in)
		out.FilesTracked = out.FilesNote == ""
	}
	if ctx.Err() != nil {
		// Cancelled by abort: the aborted result is in the session; report
		// the cancellation so the workflow sees it.
		return out, ctx.Err()
	}
	return out, nil
}

// execute runs the model's tool call (runTool).
func (a *Activities) execute(ctx context.Context, call agent.ToolCall, in RunToolInput) tools.Result {
	opts := a.toolOptions(in.Workspace, in.SessionID, call.Name == tools.Bash, in.Tools.BashTimeoutMs)
	opts.Rerun = activity.GetInfo(ctx).Attempt > 1
	if in.PathRules != nil {
		rule, err := in.PathRules.Refusal(call.Name, in.Workspace)
		if err != nil { // the workflow parsed them: not reached
			return tools.Result{IsError: true, Content: err.Error()}
		}
		opts.PathRule = rule
	}
	return a.runTool(ctx, live.NewTool(in.ResultEntryID, call.ID, call.Name), call.Name, call.Arguments, opts)
}

// runTool runs a tool (a model's call, or the user's bash command) with
// heartbeats, which carry an abort to it and publish stream, its output
// tail, as it changes. The worker's secrets leave no tool's output: not
// the stored result, its preview in history, the live tail or bash's
// full-output file.
func (a *Activities) runTool(ctx context.Context, stream *live.Accumulator, name string, args json.RawMessage, opts tools.Options) tools.Result {
	hb := a.startHeartbeat(ctx, stream)
	defer hb.stop()
	red := a.outputRedactor(ctx)
	opts.Secrets = red.needles()
	opts.OnUpdate = stream.SetOutput
	var res tools.Result
	if tools.IsMCP(name) && a.MCP != nil {
		res = a.MCP.Call(ctx, opts.Workspace, opts.Env, name, args, opts.OnUpdate)
	} else {
		res = tools.Run(ctx, name, args, opts)
	}
	// bash's output was masked as it was written (opts.Secrets).
	res.Content = red.known(res.Content)
	return res
}

// toolOptions is the environment of a tool call in the session's
// workspace under the worker's policy: its Runner, confinement and
// scrubbed environment, bash's output directory (with bash) and default
// timeout (timeoutMs, capped as the workflow caps the call's activity
// timeout; 0: none).
func (a *Activities) toolOptions(workspace, sessionID string, bash bool, timeoutMs int64) tools.Options {
	opts := tools.Options{
		Workspace:      workspace,
		Confine:        a.ToolPolicy.Confine,
		Env:            a.bashEnv(),
		Runner:         a.ToolPolicy.Runner,
		DefaultTimeout: time.Duration(min(max(timeoutMs, 0), tools.MaxBashTimeout.Milliseconds())) * time.Millisecond,
	}
	if bash {
		ignoreOutputs(workspace)
		opts.OutputDir = sessionOutputs(sessionID)
	}
	return opts
}

// outputDir is where bash keeps the full output of a truncated command,
// relative to the workspace: inside it, so the read tool may open it under
// confinement, in a directory whose own .gitignore hides it from git, grep
// and find; one directory per session (a valid session id is a file name),
// which the bash tool keeps within tools.KeptOutputFiles and
// KeptOutputBytes. Everything the worker does there goes through the
// workspace's os.Root: a link a command planted is not followed out.
const outputDir = ".durable-agent"

// sessionOutputs is the session's full-output directory, relative to the
// workspace.
func sessionOutputs(sessionID string) string {
	return filepath.Join(outputDir, "tmp", sessionID)
}

// ignoreOutputs writes outputDir's .gitignore unless it is there.
func ignoreOutputs(workspace string) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return
	}
	defer root.Close()
	if root.MkdirAll(outputDir, 0o700) != nil {
		return
	}
	f, err := root.OpenFile(filepath.Join(outputDir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return // there already (or not ours to write)
	}
	defer f.Close()
	_, _ = f.WriteString("# durable-agent: full outputs of truncated bash commands\n*\n")
}

func findToolCall(sess *session.Session, assistantID, callID string) (agent.ToolCall, error) {
	e, ok := sess.Get(assistantID)
	if !ok || e.Message == nil {
		return agent.ToolCall{}, fmt.Errorf("tool call %s: assistant entry %s is not in the session", callID, assistantID)
	}
	for _, tc := range e.Message.ToolCalls() {
		if tc.ID == callID {
			return tc, nil
		}
	}
	return agent.ToolCall{}, fmt.Errorf("tool call %s is not in assistant entry %s", callID, assistantID)
}

func toolResultOf(id string, m agent.Message, reused bool) RunToolResult {
	text := m.Text()
	preview := line.Cut(text, PreviewChars)
	return RunToolResult{EntryID: id, IsError: m.IsError, Preview: preview,
		Bytes: len(text), Truncated: preview != text, Reused: reused}
}

// ToolCallRefs describes an answer's tool calls for the workflow: ids,
// names and bounded argument previews. TimeoutSec is set only for a bash
// timeout the tool accepts (tools.BashTimeoutArg), so no argument a model
// writes can put an out-of-range timeout into the workflow's options.
func ToolCallRefs(m agent.Message) []ToolCallRef {
	var out []ToolCallRef
	for _, tc := range m.ToolCalls() {
		ref := ToolCallRef{ID: tc.ID, Name: tc.Name, ArgsPreview: ArgsPreview(tc.Arguments)}
		var m map[string]any
		if json.Unmarshal(tc.Arguments, &m) == nil {
			// A search shows what it looks for (grep's and find's
			// pattern) before where.
			for _, k := range []string{"command", "pattern", "path"} {
				if v, ok := m[k].(string); ok {
					ref.Summary = line.Cut(v, 100)
					break
				}
			}
			ref.PolicyArg, ref.PolicyArgCut = policyArg(tc.Name, m)
		}
		if tools.SpecOf(tc.Name).TimeoutArg {
			// Only a timeout the bash tool accepts becomes the call's
			// activity timeout; the tool refuses any other with an error
			// result the model can correct, within the default timeout.
			if d, ok := tools.BashTimeoutArg(tc.Arguments); ok && d > 0 {
				ref.TimeoutSec = d.Seconds()
			}
		}
		out = append(out, ref)
	}
	return out
}

// ArgsPreview shortens the string values of a tool call's arguments so
// the preview stays small whatever the model wrote (a write's content),
// and stays a JSON object ({} for arguments that are not one).
func ArgsPreview(args json.RawMessage) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil || m == nil {
		return json.RawMessage("{}")
	}
	for k, v := range m {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case map[string]any, []any:
			b, _ := json.Marshal(x)
			s = string(b)
		}
		if len(s) > argPreviewChars {
			m[k] = fmt.Sprintf("%s (%d bytes)", line.Cut(s, argPreviewChars), len(s))
		}
	}
	b, err := json.Marshal(m)
	if err != nil || len(b) > 4*argPreviewChars*4 {
		return json.RawMessage("{}")
	}
	return b
}

// bashEnv is the environment of the commands the worker runs for a
// session (bash, MCP servers, worktree git): the tools' scrubbed one.
func (a *Activities) bashEnv() []string { return tools.ScrubEnv(os.Environ(), a.ToolPolicy.EnvAllow) }
