package activities

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/sysprompt"
	"github.com/durableagent/durableagent/internal/tools"
)

// promptEnv runs BeginPrompt and CallModel of session "sp" against a
// provider that records what it receives.
type promptEnv struct {
	env  *testsuite.TestActivityEnvironment
	acts *Activities
	rec  *recorder
	leaf string
	n    int
}

func newPromptEnv(t *testing.T) *promptEnv {
	t.Helper()
	rec := &recorder{reply: answer("done")}
	acts := newActs(t, rec)
	acts.Credentials = staticCreds{id: "cred-1", secret: "sk-credential-sysprompt-0123456789"}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(acts.BeginPrompt, activityName(BeginPromptName))
	env.RegisterActivityWithOptions(acts.CallModel, activityName(CallModelName))
	return &promptEnv{env: env, acts: acts, rec: rec}
}

// prompt begins a prompt with in (its ids filled in) and makes two model
// calls in it (a first attempt and its retry); it returns what
// BeginPrompt said.
func (p *promptEnv) prompt(t *testing.T, in BeginPromptInput) BeginPromptResult {
	t.Helper()
	p.n++
	in.SessionID, in.UserEntryID = "sp", "u"+string(rune('0'+p.n))
	in.Message, in.TimestampMs = "fix the test", time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC).UnixMilli()
	v, err := p.env.ExecuteActivity(BeginPromptName, in)
	if err != nil {
		t.Fatalf("BeginPrompt: %v", err)
	}
	var b BeginPromptResult
	if err := v.Get(&b); err != nil {
		t.Fatal(err)
	}
	for _, attempt := range []string{"a", "b"} {
		call := CallModelInput{SessionID: "sp", LeafID: b.LeafID, EntryID: in.UserEntryID + attempt,
			Model: ModelRef{Provider: "anthropic", Name: "m"}, Tools: in.Tools}
		if _, err := p.env.ExecuteActivity(CallModelName, call); err != nil {
			t.Fatalf("CallModel: %v", err)
		}
	}
	p.leaf = in.UserEntryID + "b"
	return b
}

func (p *promptEnv) systems() []string {
	var out []string
	for _, r := range p.rec.reqs {
		out = append(out, r.System)
	}
	return out
}

// A repository with an AGENTS.md at its root and a workspace below it.
func project(t *testing.T) (root, ws string) {
	t.Helper()
	root = t.TempDir()
	ws = filepath.Join(root, "svc")
	for _, d := range []string{filepath.Join(root, ".git"), ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("Run go vet before every commit."), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, ws
}

// Issue 23: every model call of a prompt, the retry included, carries
// the session's system prompt: the agent's preamble, the enabled tools'
// guidelines, the workspace and the project's AGENTS.md; the session
// file records its hash and sources and BeginPrompt reports the hash;
// no secret of the worker's environment or of the credential is in it.
func TestBeginPrompt_SystemPromptReachesEveryModelCall(t *testing.T) {
	const envSecret = "sk-ant-environment-sysprompt-0123456789"
	t.Setenv("ANTHROPIC_API_KEY", envSecret)
	root, ws := project(t)
	p := newPromptEnv(t)
	b := p.prompt(t, BeginPromptInput{Workspace: ws, NeedWorkspace: true, Tools: []string{tools.Read, tools.Edit}})

	sys := p.systems()
	if len(sys) != 2 || sys[0] != sys[1] {
		t.Fatalf("the two calls sent different system prompts:\n%q", sys)
	}
	for _, want := range []string{"You are a coding agent", "Working directory: " + ws, tools.Guideline(tools.Edit),
		"## " + filepath.Join(root, "AGENTS.md") + "\n\nRun go vet before every commit.", "Friday, 4 December 2026"} {
		if !strings.Contains(sys[0], want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys[0])
		}
	}
	if strings.Contains(sys[0], tools.Guideline(tools.Bash)) {
		t.Error("the system prompt has the guideline of bash, which is not enabled")
	}
	for _, secret := range []string{envSecret, "sk-credential-sysprompt-0123456789"} {
		if strings.Contains(sys[0], secret) {
			t.Fatalf("the system prompt carries a secret")
		}
	}
	sess, err := p.acts.Sessions.Load("sp")
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := sess.SystemPrompt()
	if !ok || rec.Hash != sysprompt.Hash(sys[0]) || rec.Bytes != len(sys[0]) || b.SystemPromptHash != rec.Hash {
		t.Fatalf("record %+v (ok %v), result hash %s; want the hash of the text sent", rec, ok, b.SystemPromptHash)
	}
	if !slices.Contains(rec.Sources, filepath.Join(root, "AGENTS.md")) {
		t.Errorf("sources %q lack the AGENTS.md", rec.Sources)
	}
	// The record sits on the branch before the user message and is not
	// sent to the model as a message.
	if e, _ := sess.Get("u1"); e.ParentID != "sp-"+rec.Hash[:16] {
		t.Errorf("the user message's parent is %q, want the record", e.ParentID)
	}
	if msgs := p.rec.reqs[0].Messages; len(msgs) != 1 || msgs[0].Role != agent.RoleUser {
		t.Errorf("messages sent: %+v, want the user message alone", msgs)
	}
}

// Recorded once per session start: a later prompt of the session sends
// the identical text although AGENTS.md changed and the prompt asks for
// other tools and an appended instruction; a new session gets the new
// text, and agent.systemPrompt replaces the preamble there.
func TestBeginPrompt_SystemPromptIsTheSessionsStart(t *testing.T) {
	root, ws := project(t)
	p := newPromptEnv(t)
	first := p.prompt(t, BeginPromptInput{Workspace: ws, NeedWorkspace: true, Tools: []string{tools.Read}})
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("New rule: never run go vet."), 0o644); err != nil {
		t.Fatal(err)
	}
	second := p.prompt(t, BeginPromptInput{Workspace: ws, NeedWorkspace: true, Tools: tools.All(),
		AppendSystemPrompt: "Answer in French."})
	sys := p.systems()
	if len(sys) != 4 || len(slices.Compact(slices.Clone(sys))) != 1 {
		t.Fatalf("the session's %d calls sent %d different system prompts", len(sys), len(slices.Compact(slices.Clone(sys))))
	}
	if strings.Contains(sys[3], "never run go vet") || strings.Contains(sys[3], "French") {
		t.Fatal("a later prompt changed the session's system prompt")
	}
	if first.SystemPromptHash == "" || second.SystemPromptHash != first.SystemPromptHash {
		t.Fatalf("hashes %q then %q, want one", first.SystemPromptHash, second.SystemPromptHash)
	}
	sess, _ := p.acts.Sessions.Load("sp")
	records := 0
	for _, e := range sess.Entries {
		if e.Type == session.TypeCustom && e.CustomType == session.CustomSystemPrompt {
			records++
		}
	}
	if records != 1 {
		t.Fatalf("%d system prompt records, want 1", records)
	}

	// A new session starts with what is true now.
	if err := p.acts.Sessions.Delete("sp"); err != nil {
		t.Fatal(err)
	}
	p.n, p.rec.reqs = 0, nil
	p.prompt(t, BeginPromptInput{Workspace: ws, NeedWorkspace: true, Tools: []string{tools.Read},
		SystemPrompt: "You are a careful release engineer."})
	got := p.systems()[0]
	if !strings.HasPrefix(got, "You are a careful release engineer.") || strings.Contains(got, "You are a coding agent") ||
		!strings.Contains(got, "New rule: never run go vet.") {
		t.Fatalf("a new session's system prompt:\n%s", got)
	}
}

// A compaction summary call keeps its own system prompt, not the
// session's.
func TestSummarize_KeepsItsOwnSystemPrompt(t *testing.T) {
	_, ws := project(t)
	p := newPromptEnv(t)
	p.prompt(t, BeginPromptInput{Workspace: ws, NeedWorkspace: true, Tools: []string{tools.Read}})
	p.rec.reply = func(llm.Request) agent.Message {
		m := agent.TextMessage(agent.RoleAssistant, "summary")
		m.StopReason = agent.StopReasonStop
		return m
	}
	if _, err := runSummarize(t, p.acts, SummarizeInput{SessionID: "sp", LeafID: p.leaf, EntryID: "k1",
		Model: ModelRef{Provider: "anthropic", Name: "m"}}); err != nil {
		t.Fatal(err)
	}
	last := p.rec.reqs[len(p.rec.reqs)-1]
	if last.System != compaction.SummarySystemPrompt {
		t.Fatalf("the summary call's system prompt is %q", last.System)
	}
}

// A fork copies its source's branch, the system prompt record included,
// but not the kept text: the fork's first prompt builds its own, and the
// user message follows the conversation, not the copied record.
func TestBeginPrompt_ForkedSessionKeepsItsBranch(t *testing.T) {
	_, ws := project(t)
	p := newPromptEnv(t)
	p.prompt(t, BeginPromptInput{Workspace: ws, NeedWorkspace: true, Tools: []string{tools.Read}})
	src, err := p.acts.Sessions.Load("sp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.acts.Sessions.Init("fork", session.Header{Cwd: ws}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.acts.Sessions.Append("fork", src.Branch(p.leaf)...); err != nil {
		t.Fatal(err)
	}
	in := BeginPromptInput{SessionID: "fork", UserEntryID: "f1", Message: "go on", Workspace: ws, NeedWorkspace: true,
		Tools: []string{tools.Read}, TimestampMs: time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC).UnixMilli()}
	if _, err := p.env.ExecuteActivity(BeginPromptName, in); err != nil {
		t.Fatal(err)
	}
	fork, _ := p.acts.Sessions.Load("fork")
	if e, _ := fork.Get("f1"); e.ParentID != p.leaf {
		t.Fatalf("the fork's user message hangs under %q, want the conversation's leaf %q", e.ParentID, p.leaf)
	}
	if kept, err := p.acts.Sessions.Aside("fork", session.SystemPromptKey); err != nil || kept == nil {
		t.Fatalf("the fork kept no system prompt: %v", err)
	}
}
