package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/mcp"
	"github.com/durableagent/durableagent/internal/metrics"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/tools"
	"github.com/durableagent/durableagent/internal/tracing"
)

// Credentials is the part of the auth store the activities use. Secrets
// leave it only into provider requests and the redaction of tool output.
type Credentials interface {
	// Select returns the session's credential for provider; ok is false
	// when the provider has none configured. err means the store could not
	// be read: the call then fails rather than run without the credential.
	// Its text must not contain a secret.
	Select(provider, sessionID string) (c auth.Credential, ok bool, err error)
	// MarkUsageLimit blocks the session's current credential and reports
	// whether the session was switched to another one or, when no
	// credential is left, to the next model it may fall back to (settings
	// retry.fallbackModels: Switched, Model set), which the workflow runs
	// at once (SPEC 3 step 7).
	MarkUsageLimit(provider, model, sessionID string, retryAfterMs int64) (auth.Switch, error)
	// Secrets returns every secret the store holds now (read at call
	// time: a credential added while the worker runs is included), so that
	// tool output is redacted of them. An error's text must not contain a
	// secret.
	Secrets() ([]string, error)
}

// MaxHeartbeatInterval bounds the heartbeat ticker of CallModel. The
// worker's heartbeat throttle must not be longer (see internal/app), or
// an abort waits for the throttle before it reaches the model call.
const MaxHeartbeatInterval = time.Second

// Activities holds the worker-side dependencies of the activities.
type Activities struct {
	Sessions session.Backend
	// Provider returns the implementation for a provider name.
	Provider func(name string) (llm.Provider, error)
	// Credentials may be nil: providers then run without a secret.
	Credentials Credentials
	// Windows keeps the credentials' rate-limit windows (coordinated
	// backoff, backoff.go); nil: every call goes out at once.
	Windows RateWindows
	// ModelQueues says this worker's model calls run on a task queue per
	// provider (ModelQueue), where the fleet-wide limits apply; BeginPrompt
	// tells each prompt.
	ModelQueues bool
	// ToolPolicy is where tools may act (the worker's settings).
	ToolPolicy ToolPolicy
	// Secrets are secret values of the worker's settings (the codec key
	// of codec.keyFile, the session database's URL and password) that
	// tool output is redacted of, besides the credential store's and the
	// environment's, which are read at each call (outputRedactor).
	Secrets []string
	// NeedsCredential reports whether calls to a provider need a
	// credential (nil: never checked). The scripted model and a provider
	// with its own base URL (a local server) need none.
	NeedsCredential func(provider string) bool
	// ToolHost is this worker's host when tools are placed by host
	// (tools.placement host): a session it creates records it, and the
	// session's tool calls go to ToolQueue(taskQueue, ToolHost). "" when
	// any worker runs any session's tools.
	ToolHost string
	// WorktreeDir is where this worker makes sessions' git worktrees
	// (<dataDir>/worktrees; "": it makes none and a prompt asking for one
	// fails).
	WorktreeDir string
	// Checkpoints is where and how this worker keeps the sessions'
	// workspace checkpoints (checkpoint.go).
	Checkpoints Checkpoints
	// HeartbeatInterval is the heartbeat ticker (stream.intervalMs; 0:
	// MaxHeartbeatInterval).
	HeartbeatInterval time.Duration
	// MCP runs the tools of the worker's MCP servers (mcp.servers; nil:
	// none).
	MCP *mcp.Manager
	// Push, when set, serves the live output of running model and tool
	// calls to followers as it changes (internal/live's push path); their
	// heartbeats then carry its address and beat every
	// MaxHeartbeatInterval at most. Nil: the heartbeats alone carry it.
	Push *live.Hub
	// recordHeartbeat is activity.RecordHeartbeat (tests count calls).
	recordHeartbeat func(ctx context.Context, details ...any)
}

// WrapProvider puts wrap in front of every provider Provider returns: how a
// test or a benchmark puts a fault or a recorder between the activities
// and the real (or scripted) provider. A provider name Provider refuses
// stays refused.
func (a *Activities) WrapProvider(wrap func(llm.Provider) llm.Provider) {
	inner := a.Provider
	a.Provider = func(name string) (llm.Provider, error) {
		p, err := inner(name)
		if err != nil {
			return nil, err
		}
		return wrap(p), nil
	}
}

// CallModel runs one model call on the run context ending at in.LeafID and
// writes the assistant message to the session under in.EntryID.
func (a *Activities) CallModel(ctx context.Context, in CallModelInput) (CallModelResult, error) {
	sess, err := a.load(in.SessionID)
	if err != nil {
		return CallModelResult{}, err
	}
	if e, ok := sess.Get(in.EntryID); ok && e.Message != nil {
		// A re-run of a call that already completed: report it again
		// rather than calling the model twice.
		return resultOf(in.EntryID, *e.Message, ""), nil
	}
	provider, err := a.Provider(in.Model.Provider)
	if err != nil {
		return CallModelResult{}, badInput(err)
	}
	req := llm.Request{
		SessionID:     in.SessionID,
		Provider:      in.Model.Provider,
		Model:         in.Model.Name,
		Messages:      llm.SendableMessages(sess.Context(in.LeafID)),
		MaxTokens:     in.Model.MaxTokens,
		Attempt:       callsAfter(sess, lastUserID(sess, in.LeafID)),
		Faults:        in.Model.Faults,
		Tools:         tools.Specs(in.Tools),
		ThinkingLevel: in.Model.ThinkingLevel,
	}
	// The session's system prompt, kept at its start (BeginPrompt): every
	// call of the session sends the same one, whichever worker makes it.
	if req.System, err = a.systemPrompt(in.SessionID); err != nil {
		return CallModelResult{}, err
	}
	if in.FaultsAt != "" {
		var kept faultScripts
		if err := a.readAside(in.SessionID, in.FaultsAt, "fault script", &kept); err != nil {
			return CallModelResult{}, err
		}
		req.Faults = kept.Faults
	}
	if in.PromptEntryID != "" {
		// Steer and follow-up messages restart Attempt, not the script.
		req.FaultOffset = callsAfter(sess, in.PromptEntryID) - req.Attempt
	}
	var credID string
	if a.Credentials != nil {
		cred, ok, err := a.Credentials.Select(in.Model.Provider, in.SessionID)
		if err != nil {
			return CallModelResult{}, credentialsError(in.Model.Provider, err)
		}
		if ok {
			credID, req.Secret = cred.ID, cred.Secret
		}
		if !ok && a.NeedsCredential != nil && a.NeedsCredential(in.Model.Provider) {
			// The prompt names a provider this worker has no key for: say
			// so at once instead of sending an anonymous request.
			return CallModelResult{}, credentialsError(in.Model.Provider, fmt.Errorf(
				"this worker has no credential for it (add one with `starter auth add %s` on the worker host, or set its API key variable in the worker's environment)",
				in.Model.Provider))
		}
	}

	// The answer so far is the heartbeat's details: clients read it while
	// the call runs (live output), and it never enters history.
	stream := live.NewModel(in.EntryID, req.Attempt)
	if in.Model.Cost != nil {
		stream.SetPrice(*in.Model.Cost) // the streaming usage's cost so far
	}
	hb := a.startHeartbeat(ctx, stream)
	// The MCP servers' tools that tools.enabled names, listed in the
	// session's workspace (a server that fails is left out, and logged),
	// under the call's heartbeats: a server may take a while to start.
	var mcpTools []string
	if a.MCP != nil {
		specs, names, problems := a.MCP.Specs(ctx, sess.Header.Cwd, a.bashEnv(), in.Tools)
		req.Tools, mcpTools = append(req.Tools, specs...), names
		for _, p := range problems {
			activity.GetLogger(ctx).Warn("MCP server left out of the model's tools", "session", in.SessionID, "problem", p)
		}
	}
	// Hold while the credential's rate-limit window is open (backoff.go).
	win, held := a.hold(ctx, in.Model.Provider, credID)
	req.OnDelta = func(d llm.Delta) {
		win.through()
		if d.Usage != nil {
			stream.SetUsage(*d.Usage)
		}
		stream.Add(d)
	}
	msg := complete(ctx, provider, req)
	win.finish(msg)
	parentID, billed, err := a.continuePaused(ctx, provider, &req, in, &msg)
	hb.stop()
	if err != nil {
		return CallModelResult{}, err
	}

	if cancelledWithoutAbort(ctx) {
		// Not an abort (cancel.go): write nothing, so the workflow's
		// record of the lost call (a retryable connection error) stands;
		// a stored "aborted" would win (the first write of an id does)
		// and end the prompt as aborted.
		return CallModelResult{}, ctx.Err()
	}
	if ctx.Err() != nil && msg.StopReason != agent.StopReasonAborted {
		u := msg.Usage // billed all the same
		msg = llm.AbortedMessage(req)
		msg.Usage = u
	}
	finishMessage(&msg, in.Model, req.Secret)
	metrics.ModelCall(ctx, in.Model.Provider, in.Model.Name, msg)
	tracing.ModelCall(ctx, in.Model.Provider, in.Model.Name, req.Attempt, msg)
	entry := session.Entry{
		Type: session.TypeMessage, ID: in.EntryID, ParentID: parentID,
		Timestamp: time.Now().UTC(), Message: &msg,
	}
	if _, err := a.Sessions.Append(in.SessionID, entry); err != nil {
		return CallModelResult{}, storeError("write assistant message", err)
	}
	res := resultOf(in.EntryID, msg, credID)
	res.HeldMs, res.Billed, res.MCPTools = held.Milliseconds(), billed, mcpTools
	if msg.StopReason == agent.StopReasonAborted && ctx.Err() != nil {
		// Report the cancellation so the workflow sees a cancelled
		// activity; the aborted message is already in the session.
		return res, ctx.Err()
	}
	return res, nil
}

// complete calls the model. A call that failed or was aborted after its
// stream reported usage (a provider bills the tokens it processed) keeps
// that usage, though the provider's message has none: budgets count it.
func complete(ctx context.Context, p llm.Provider, req llm.Request) agent.Message {
	var seen agent.Usage // each report's counts so far; a count it leaves out is 0
	next := req.OnDelta
	req.OnDelta = func(d llm.Delta) {
		if u := d.Usage; u != nil {
			seen = agent.Usage{Input: max(seen.Input, u.Input), Output: max(seen.Output, u.Output),
				CacheRead: max(seen.CacheRead, u.CacheRead), CacheWrite: max(seen.CacheWrite, u.CacheWrite)}
		}
		if next != nil {
			next(d)
		}
	}
	m := p.Complete(ctx, req)
	if m.Usage == nil && seen != (agent.Usage{}) {
		m.Usage = &seen
	}
	return m
}

func resultOf(id string, m agent.Message, credID string) CallModelResult {
	res := CallModelResult{EntryID: id, StopReason: m.StopReason, ModelError: ModelErrorOf(m), Usage: m.Usage,
		Text: agent.ShortenText(m.Text(), MaxAnswerInHistory, id), CredentialID: credID, ToolCalls: ToolCallRefs(m)}
	res.ErrorMessage = agent.ShortenText(m.ErrorMessage, MaxErrorInHistory, id)
	return res
}

// Bounds of what a model call's result carries into Temporal history (as
// JSON, agent.ShortenText): an answer or an error body (an HTML error page,
// a runaway generation) past them is cut there, with a note; the whole
// message is in the session entry. History per model call stays bounded
// whatever the model writes.
const (
	MaxAnswerInHistory = 64 << 10
	MaxErrorInHistory  = 16 << 10
)

// faultScripts are a prompt's fault scripts as BeginPrompt keeps them
// beside the session (keepAside, under the prompt's user entry id).
type faultScripts struct {
	Faults        []string `json:"faults,omitempty"`
	SummaryFaults []string `json:"summaryFaults,omitempty"`
}

// keepAside keeps v as JSON beside the session under key (what names
// it in an error).
func (a *Activities) keepAside(sessionID, key, what string, v any) error {
	b, err := json.Marshal(v)
	if err == nil {
		err = a.Sessions.PutAside(sessionID, key, b)
	}
	if err != nil {
		return storeError("keep "+what, err)
	}
	return nil
}

// readAside reads into v what keepAside kept under key (v is left alone
// when nothing is).
func (a *Activities) readAside(sessionID, key, what string, v any) error {
	b, err := a.Sessions.Aside(sessionID, key)
	if err == nil && b != nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		return storeError("read "+what, err)
	}
	return nil
}

// lastUserID is the id of the user message that opens the current turn
// of the branch ending at leafID ("" when none).
func lastUserID(sess *session.Session, leafID string) string {
	branch := sess.Branch(leafID)
	for i := len(branch) - 1; i >= 0; i-- {
		if m := branch[i].Message; m != nil && m.Role == agent.RoleUser {
			return branch[i].ID
		}
	}
	return ""
}

// callsAfter counts the assistant entries written to the file after the
// user message userID (all of them for ""): the model calls already made
// since, including failed ones that are no longer in the run context.
func callsAfter(sess *session.Session, userID string) int {
	n, seen := 0, userID == ""
	for _, e := range sess.Entries {
		if e.ID == userID {
			seen = true
			continue
		}
		if seen && e.Message != nil && e.Message.Role == agent.RoleAssistant {
			n++
		}
	}
	return n
}

// AppendEntries writes entries to the session file; existing ids are
// skipped, so re-running it is harmless.
func (a *Activities) AppendEntries(ctx context.Context, in AppendEntriesInput) (AppendEntriesResult, error) {
	if err := session.ValidateID(in.SessionID); err != nil {
		return AppendEntriesResult{}, badInput(err)
	}
	if in.ForkFrom != "" {
		src, err := a.Sessions.Load(in.ForkFrom)
		if err == nil {
			where := session.Header{Cwd: src.Header.Cwd, Host: src.Header.Host}
			if w := in.ForkWorkspace; w != nil {
				where.Cwd, where.Worktree = w.Cwd, w.Worktree
			}
			_, err = a.Sessions.Init(in.SessionID, where)
		}
		if err != nil {
			return AppendEntriesResult{}, storeError("fork session "+in.ForkFrom, err)
		}
		in.Entries = append(src.Branch(in.ForkThrough), in.Entries...)
	}
	n, err := a.Sessions.Append(in.SessionID, in.Entries...)
	if err != nil {
		return AppendEntriesResult{}, storeError("append to session", err)
	}
	return AppendEntriesResult{Written: n}, nil
}

// LoadSession describes the session's run context (a missing session is
// a new, empty one).
func (a *Activities) LoadSession(ctx context.Context, in LoadSessionInput) (LoadSessionResult, error) {
	sess, err := a.load(in.SessionID)
	if errors.Is(err, session.ErrNotFound) {
		return LoadSessionResult{}, nil
	}
	if err != nil {
		return LoadSessionResult{}, err
	}
	leaf := sess.LeafID()
	return LoadSessionResult{Exists: true, LeafID: leaf, MessageCount: len(sess.Context(leaf)),
		Workspace: sess.Header.Cwd, Host: sess.Header.Host}, nil
}

// MarkUsageLimitReached tells the auth store that the session's credential
// hit its usage limit; the store may switch the session to another
// credential or a fallback model.
func (a *Activities) MarkUsageLimitReached(ctx context.Context, in MarkUsageLimitInput) (MarkUsageLimitResult, error) {
	if a.Credentials == nil {
		return MarkUsageLimitResult{}, nil
	}
	sw, err := a.Credentials.MarkUsageLimit(in.Provider, in.Model, in.SessionID, in.RetryAfterMs)
	if err != nil {
		return MarkUsageLimitResult{}, fmt.Errorf("mark usage limit reached for %s model %s: %w", in.Provider, in.Model, err)
	}
	return sw, nil
}
