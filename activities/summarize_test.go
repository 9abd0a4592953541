package activities

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/session"
)

// recorder is a fake provider that records requests and answers with
// reply(req).
type recorder struct {
	mu    sync.Mutex
	reqs  []llm.Request
	reply func(req llm.Request) agent.Message
}

func (p *recorder) Complete(_ context.Context, req llm.Request) agent.Message {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	return p.reply(req)
}

func answer(text string) func(llm.Request) agent.Message {
	return func(llm.Request) agent.Message {
		m := agent.TextMessage(agent.RoleAssistant, text)
		m.StopReason = agent.StopReasonStop
		return m
	}
}

func newActs(t *testing.T, p llm.Provider) *Activities {
	t.Helper()
	store, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Activities{
		Sessions:          store,
		Provider:          func(string) (llm.Provider, error) { return p, nil },
		HeartbeatInterval: 50 * time.Millisecond,
	}
}

// msg builds a message entry; text of n characters is n/4 tokens.
func msg(id, parent string, role agent.Role, text string) session.Entry {
	m := agent.TextMessage(role, text)
	if role == agent.RoleAssistant {
		m.StopReason = agent.StopReasonStop
	}
	return session.Entry{Type: session.TypeMessage, ID: id, ParentID: parent, Timestamp: time.Unix(0, 0).UTC(), Message: &m}
}

// seed writes a chain of entries, each the child of the one before.
func seed(t *testing.T, a *Activities, entries ...session.Entry) {
	t.Helper()
	parent := ""
	for i := range entries {
		if entries[i].ParentID == "" {
			entries[i].ParentID = parent
		}
		parent = entries[i].ID
	}
	if _, err := a.Sessions.Append("s1", entries...); err != nil {
		t.Fatal(err)
	}
}

func text(n int) string { return strings.Repeat("x", n) }

func runSummarize(t *testing.T, a *Activities, in SummarizeInput) (SummarizeResult, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a.Summarize)
	v, err := env.ExecuteActivity(a.Summarize, in)
	if err != nil {
		return SummarizeResult{}, err
	}
	var res SummarizeResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	return res, nil
}

func compactionEntries(t *testing.T, a *Activities) []session.Entry {
	t.Helper()
	sess, err := a.Sessions.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	var out []session.Entry
	for _, e := range sess.Entries {
		if e.Type == session.TypeCompaction {
			out = append(out, e)
		}
	}
	return out
}

// four turns of 100 tokens per message, then a short user message.
func history() []session.Entry {
	return []session.Entry{
		msg("u1", "", agent.RoleUser, text(400)), msg("a1", "", agent.RoleAssistant, text(400)),
		msg("u2", "", agent.RoleUser, text(400)), msg("a2", "", agent.RoleAssistant, text(400)),
		msg("u3", "", agent.RoleUser, "go on"),
	}
}

// SPEC 9: the summary request carries the summary system prompt and one
// user message with the prompt; the entry records summary, first kept id
// and tokens before, as the leaf's child; a re-run writes nothing twice.
func TestSummarize_WritesCompactionEntryOnceUnderTheLeaf(t *testing.T) {
	p := &recorder{reply: answer("## Goal\nship it")}
	a := newActs(t, p)
	seed(t, a, history()...)
	in := SummarizeInput{SessionID: "s1", LeafID: "u3", EntryID: "c1", KeepRecentTokens: 150,
		Model: ModelRef{Provider: "fake", Name: "m", SummaryFaults: []string{"x"}}, Attempt: 2, CustomInstructions: "keep the schema"}
	res, err := runSummarize(t, a, in)
	if err != nil {
		t.Fatal(err)
	}
	want := SummarizeResult{EntryID: "c1", Summary: "## Goal\nship it", FirstKeptEntryID: "u2",
		TokensBefore: 402, MessageCount: 4, StopReason: agent.StopReasonStop}
	if res != want {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	if len(p.reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(p.reqs))
	}
	req := p.reqs[0]
	if req.System != compaction.SummarySystemPrompt || req.Purpose != llm.PurposeSummarize ||
		len(req.Messages) != 1 || req.Messages[0].Role != agent.RoleUser {
		t.Fatalf("request system/purpose/messages wrong: %+v", req)
	}
	prompt := req.Messages[0].Text()
	if !strings.Contains(prompt, "[User]: "+text(400)) || strings.Contains(prompt, "go on") || !strings.HasSuffix(prompt, "keep the schema") {
		t.Fatalf("prompt does not summarise exactly u1, a1 with the instructions last:\n%s", prompt)
	}
	if req.Attempt != 2 || len(req.Faults) != 1 || req.Faults[0] != "x" {
		t.Fatalf("attempt %d faults %v, want the summary fault script at attempt 2", req.Attempt, req.Faults)
	}
	entries := compactionEntries(t, a)
	if len(entries) != 1 || entries[0].ParentID != "u3" || entries[0].FirstKeptEntryID != "u2" || entries[0].TokensBefore != 402 {
		t.Fatalf("compaction entries %+v", entries)
	}

	again, err := runSummarize(t, a, in)
	if err != nil || again != want {
		t.Fatalf("re-run: %+v %v, want %+v", again, err, want)
	}
	if len(p.reqs) != 1 || len(compactionEntries(t, a)) != 1 {
		t.Fatalf("re-run called the model or wrote again: %d calls, %d entries", len(p.reqs), len(compactionEntries(t, a)))
	}
}

// SPEC 9 item 6: after a compaction the context is the summary plus the
// entries from firstKeptEntryId on.
func TestSummarize_ContextRebuiltFromCompactionEntry(t *testing.T) {
	a := newActs(t, &recorder{reply: answer("S1")})
	seed(t, a, history()...)
	if _, err := runSummarize(t, a, SummarizeInput{SessionID: "s1", LeafID: "u3", EntryID: "c1", KeepRecentTokens: 150, Model: ModelRef{Provider: "fake"}}); err != nil {
		t.Fatal(err)
	}
	sess, err := a.Sessions.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range sess.Context("c1") {
		got = append(got, string(m.Role)+":"+shortText(m.Text()))
	}
	want := []string{"compactionSummary:S1", "user:" + shortText(text(400)), "assistant:" + shortText(text(400)), "user:go on"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("context %v, want %v", got, want)
	}
}

func shortText(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

// SPEC 9: a later compaction merges the previous summary and never keeps
// it as a message.
func TestSummarize_SecondCompactionMergesPreviousSummary(t *testing.T) {
	p := &recorder{reply: answer("S")}
	a := newActs(t, p)
	seed(t, a, history()...)
	if _, err := runSummarize(t, a, SummarizeInput{SessionID: "s1", LeafID: "u3", EntryID: "c1", KeepRecentTokens: 150, Model: ModelRef{Provider: "fake"}}); err != nil {
		t.Fatal(err)
	}
	seed(t, a, msg("a3", "c1", agent.RoleAssistant, text(400)), msg("u4", "", agent.RoleUser, text(400)), msg("a4", "", agent.RoleAssistant, text(400)), msg("u5", "", agent.RoleUser, "next"))
	res, err := runSummarize(t, a, SummarizeInput{SessionID: "s1", LeafID: "u5", EntryID: "c2", KeepRecentTokens: 150, Model: ModelRef{Provider: "fake"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstKeptEntryID != "u4" || res.MessageCount != 4 {
		t.Fatalf("result %+v, want kept from u4 with 4 messages", res)
	}
	prompt := p.reqs[1].Messages[0].Text()
	if !strings.Contains(prompt, "<previous-summary>\nS\n</previous-summary>") || strings.Contains(prompt, "[Earlier summary]") {
		t.Fatalf("second prompt does not merge the previous summary:\n%s", prompt)
	}
}

// SPEC 9: a cut inside a turn summarises the turn's beginning with a
// second call and joins both summaries.
func TestSummarize_SplitTurnMakesSecondCall(t *testing.T) {
	p := &recorder{reply: func(req llm.Request) agent.Message {
		if strings.Contains(req.Messages[0].Text(), "## Original Request") {
			return answer("PREFIX")(req)
		}
		return answer("HISTORY")(req)
	}}
	a := newActs(t, p)
	seed(t, a,
		msg("u1", "", agent.RoleUser, text(400)), msg("a1", "", agent.RoleAssistant, text(400)),
		msg("u2", "", agent.RoleUser, text(40)), msg("a2", "", agent.RoleAssistant, text(400)),
		msg("a3", "", agent.RoleAssistant, text(400)))
	res, err := runSummarize(t, a, SummarizeInput{SessionID: "s1", LeafID: "a3", EntryID: "c1", KeepRecentTokens: 100, Model: ModelRef{Provider: "fake"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.reqs) != 2 || res.FirstKeptEntryID != "a3" {
		t.Fatalf("%d calls, first kept %q; want 2 calls keeping a3", len(p.reqs), res.FirstKeptEntryID)
	}
	if want := compaction.JoinSplitTurnSummary("HISTORY", "PREFIX"); res.Summary != want {
		t.Fatalf("summary %q, want %q", res.Summary, want)
	}
}

// Issue 22: a summary's calls are spent like the prompt's model calls:
// the result carries the usage of both calls of a split turn, priced at
// the model's cost, so the prompt's budget counts it.
func TestSummarize_ReportsThePricedUsageOfItsCalls(t *testing.T) {
	p := &recorder{reply: func(req llm.Request) agent.Message {
		m := answer("HISTORY")(req)
		if strings.Contains(req.Messages[0].Text(), "## Original Request") {
			m = answer("PREFIX")(req)
		}
		m.Usage = &agent.Usage{Input: 1000, Output: 100}
		return m
	}}
	a := newActs(t, p)
	seed(t, a,
		msg("u1", "", agent.RoleUser, text(400)), msg("a1", "", agent.RoleAssistant, text(400)),
		msg("u2", "", agent.RoleUser, text(40)), msg("a2", "", agent.RoleAssistant, text(400)),
		msg("a3", "", agent.RoleAssistant, text(400)))
	price := &agent.ModelCost{Input: 3, Output: 15} // dollars per million tokens
	res, err := runSummarize(t, a, SummarizeInput{SessionID: "s1", LeafID: "a3", EntryID: "c1", KeepRecentTokens: 100,
		Model: ModelRef{Provider: "fake", Cost: price}})
	if err != nil {
		t.Fatal(err)
	}
	u := res.Usage
	if len(p.reqs) != 2 || u == nil || u.Input != 2000 || u.Output != 200 || u.TotalTokens != 2200 {
		t.Fatalf("%d calls, usage %+v; want 2 calls of 1000 in + 100 out each, summed", len(p.reqs), u)
	}
	if want := 2000*3.0/1e6 + 200*15.0/1e6; math.Abs(u.Cost.Total-want) > 1e-9 {
		t.Fatalf("cost %v, want %v", u.Cost.Total, want)
	}
}

// SPEC 7 applied to summaries: a provider error is data, nothing is
// written, and a secret echoed by the provider is redacted.
func TestSummarize_ModelErrorIsDataAndWritesNothing(t *testing.T) {
	const secret = "sk-secret-1234567890"
	p := &recorder{reply: func(req llm.Request) agent.Message {
		m := llm.ErrorMessage(req, "503 Service Unavailable for key "+req.Secret)
		m.ErrorStatus, m.ErrorType = 503, "overloaded_error"
		return m
	}}
	a := newActs(t, p)
	a.Credentials = staticCreds{id: "cred-1", secret: secret}
	seed(t, a, history()...)
	res, err := runSummarize(t, a, SummarizeInput{SessionID: "s1", LeafID: "u3", EntryID: "c1", KeepRecentTokens: 150, Model: ModelRef{Provider: "fake"}})
	if err != nil {
		t.Fatalf("a provider error failed the activity: %v", err)
	}
	if res.StopReason != agent.StopReasonError || res.ErrorStatus != 503 || res.ErrorType != "overloaded_error" || res.EntryID != "" {
		t.Fatalf("result %+v", res)
	}
	if strings.Contains(res.ErrorMessage, secret) || !strings.Contains(res.ErrorMessage, "503 Service Unavailable") {
		t.Fatalf("error message %q leaks the secret or lost the error", res.ErrorMessage)
	}
	if n := len(compactionEntries(t, a)); n != 0 {
		t.Fatalf("%d compaction entries written after a failed summary", n)
	}
}

func TestSummarize_EmptyAnswerIsAnError(t *testing.T) {
	a := newActs(t, &recorder{reply: answer("  ")})
	seed(t, a, history()...)
	res, err := runSummarize(t, a, SummarizeInput{SessionID: "s1", LeafID: "u3", EntryID: "c1", KeepRecentTokens: 150, Model: ModelRef{Provider: "fake"}})
	if err != nil || res.StopReason != agent.StopReasonError || res.ErrorMessage != EmptySummaryMessage {
		t.Fatalf("result %+v, %v; want the empty-summary error", res, err)
	}
}

func TestSummarize_NothingToCompactCallsNoModel(t *testing.T) {
	tests := []struct {
		name    string
		entries []session.Entry
		leaf    string
	}{
		{"everything fits in keepRecentTokens", history(), "u3"},
		{"no session file", nil, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &recorder{reply: answer("S")}
			a := newActs(t, p)
			if tt.entries != nil {
				seed(t, a, tt.entries...)
			}
			res, err := runSummarize(t, a, SummarizeInput{SessionID: "s1", LeafID: tt.leaf, EntryID: "c1", KeepRecentTokens: 100000, Model: ModelRef{Provider: "fake"}})
			if err != nil || !res.NothingToCompact || res.EntryID != "" {
				t.Fatalf("result %+v, %v; want nothing to compact", res, err)
			}
			if len(p.reqs) != 0 {
				t.Fatalf("%d model calls, want none", len(p.reqs))
			}
		})
	}
}

func TestSummarize_BadInputIsNonRetryable(t *testing.T) {
	a := newActs(t, &recorder{reply: answer("S")})
	for _, in := range []SummarizeInput{{SessionID: "../x", EntryID: "c"}, {SessionID: "s1"}} {
		_, err := runSummarize(t, a, in)
		if err == nil || !strings.Contains(err.Error(), ErrTypeBadInput) {
			t.Errorf("input %+v: error %v, want %s", in, err, ErrTypeBadInput)
		}
	}
}

// TokensBefore uses the provider's usage of the newest successful answer
// after the last compaction, plus estimates of what follows it.
func TestContextItems_UsageAnchor(t *testing.T) {
	withUsage := func(e session.Entry, input, output int) session.Entry {
		e.Message.Usage = &agent.Usage{Input: input, Output: output}
		return e
	}
	failed := msg("e1", "", agent.RoleAssistant, "")
	failed.Message.StopReason = agent.StopReasonError
	failed.Message.Usage = &agent.Usage{Input: 99999}
	tests := []struct {
		name    string
		entries []session.Entry
		want    int
	}{
		{"no usage: estimates", []session.Entry{msg("u1", "", agent.RoleUser, text(40)), msg("a1", "", agent.RoleAssistant, text(40))}, 20},
		{"usage plus later estimates", []session.Entry{msg("u1", "", agent.RoleUser, text(40)), withUsage(msg("a1", "", agent.RoleAssistant, text(40)), 500, 10), msg("u2", "", agent.RoleUser, text(40))}, 520},
		{"failed answers are no anchor", []session.Entry{msg("u1", "", agent.RoleUser, text(40)), failed}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newActs(t, nil)
			seed(t, a, tt.entries...)
			sess, err := a.Sessions.Load("s1")
			if err != nil {
				t.Fatal(err)
			}
			items, anchor := contextItems(sess, sess.LeafID())
			if got := compaction.EstimateContext(items, anchor); got != tt.want {
				t.Fatalf("tokens %d, want %d", got, tt.want)
			}
		})
	}
}

// contextItems must see the same run context as Session.Context (the
// messages a model call sends), with ids.
func TestContextItems_SameMessagesAsSessionContext(t *testing.T) {
	dropped := msg("e1", "u2", agent.RoleAssistant, "")
	dropped.Message.StopReason = agent.StopReasonError
	comp := session.Entry{Type: session.TypeCompaction, ID: "c1", ParentID: "a2", Summary: "S", FirstKeptEntryID: "u2"}
	tests := []struct {
		name    string
		entries []session.Entry
		leaf    string
		wantIDs string
	}{
		{"plain branch", history(), "u3", "u1 a1 u2 a2 u3"},
		{"dropped error is a sibling", append(history()[:4], dropped, msg("a2b", "u2", agent.RoleAssistant, "ok")), "a2b", "u1 a1 u2 a2b"},
		{"after a compaction", append(history()[:4], comp, msg("u3", "c1", agent.RoleUser, "go")), "u3", "c1 u2 a2 u3"},
		{"first kept not on branch", append(history()[:4], session.Entry{Type: session.TypeCompaction, ID: "c1", ParentID: "a2", Summary: "S", FirstKeptEntryID: "zz"}), "c1", "c1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newActs(t, nil)
			seed(t, a, tt.entries...)
			sess, err := a.Sessions.Load("s1")
			if err != nil {
				t.Fatal(err)
			}
			items, _ := contextItems(sess, tt.leaf)
			msgs := sess.Context(tt.leaf)
			if len(items) != len(msgs) {
				t.Fatalf("%d items, %d context messages", len(items), len(msgs))
			}
			var ids []string
			for i, it := range items {
				ids = append(ids, it.ID)
				if it.Role != string(msgs[i].Role) || it.Text != msgs[i].Text() {
					t.Fatalf("item %d = %s %q, context message %s %q", i, it.Role, it.Text, msgs[i].Role, msgs[i].Text())
				}
			}
			if got := strings.Join(ids, " "); got != tt.wantIDs {
				t.Fatalf("ids %q, want %q", got, tt.wantIDs)
			}
		})
	}
}

func TestCompactionItem_ConvertsEveryBlock(t *testing.T) {
	m := agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{
		{Type: "thinking", Text: "hmm"}, {Type: "text", Text: "reading"},
		{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "c1", Name: "read", Arguments: []byte(`{"path":"a.go"}`)}},
	}}
	it := CompactionItem("e1", m)
	if it.ID != "e1" || it.Role != compaction.RoleAssistant || it.Text != "reading" || it.Thinking != "hmm" ||
		len(it.ToolCalls) != 1 || it.ToolCalls[0].Name != "read" || string(it.ToolCalls[0].Arguments) != `{"path":"a.go"}` {
		t.Fatalf("item %+v", it)
	}
	r := CompactionItem("e2", agent.Message{Role: agent.RoleToolResult, ToolCallID: "c1", ToolName: "read", IsError: true,
		Content: []agent.ContentBlock{{Type: "text", Text: "no such file"}}})
	if r.Role != compaction.RoleToolResult || r.ToolCallID != "c1" || r.ToolName != "read" || !r.IsError || r.Text != "no such file" {
		t.Fatalf("tool result item %+v", r)
	}
}
