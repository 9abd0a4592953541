package activities

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/session"
)

// SummarizeName is the registered name of Summarize.
const SummarizeName = "Summarize"

// EmptySummaryMessage is the error of a summary call that answered with no
// text: recording an empty summary would silently lose the history.
const EmptySummaryMessage = "summary model returned an empty summary"

// Summarize compacts the run context that ends at in.LeafID: it plans the
// cut (compaction.PlanCut with in.KeepRecentTokens), asks the model for a
// summary of the older part (a second call summarises the beginning of a
// split turn), and writes a compaction entry under in.EntryID as the
// leaf's child. The session file keeps every message; the entry only
// changes what later run contexts contain (session.Session.Context).
//
// Model failures come back as data (StopReason "error"), so the workflow
// decides about retries; nothing is written then. A re-run after the entry
// was written reports that entry without calling the model again.
// Cancellation returns the context's error with nothing written.
func (a *Activities) Summarize(ctx context.Context, in SummarizeInput) (SummarizeResult, error) {
	if in.EntryID == "" {
		return SummarizeResult{}, badInput(errors.New("summarize: empty compaction entry id"))
	}
	sess, err := a.load(in.SessionID)
	if errors.Is(err, session.ErrNotFound) {
		return SummarizeResult{NothingToCompact: true}, nil
	}
	if err != nil {
		return SummarizeResult{}, err
	}
	if e, ok := sess.Get(in.EntryID); ok && e.Type == session.TypeCompaction {
		return SummarizeResult{EntryID: e.ID, Summary: e.Summary, FirstKeptEntryID: e.FirstKeptEntryID,
			TokensBefore: e.TokensBefore, MessageCount: len(sess.Context(e.ID)), StopReason: agent.StopReasonStop}, nil
	}

	items, anchor := contextItems(sess, in.LeafID)
	tokensBefore := compaction.EstimateContext(items, anchor)
	cut := compaction.PlanCut(items, in.KeepRecentTokens)
	if cut.NothingToCompact {
		return SummarizeResult{NothingToCompact: true, TokensBefore: tokensBefore, MessageCount: len(items)}, nil
	}

	provider, err := a.Provider(in.Model.Provider)
	if err != nil {
		return SummarizeResult{}, badInput(err)
	}
	base := llm.Request{
		SessionID: in.SessionID,
		Provider:  in.Model.Provider,
		Model:     in.Model.Name,
		System:    compaction.SummarySystemPrompt,
		MaxTokens: in.Model.MaxTokens,
		Attempt:   in.Attempt,
		Faults:    in.Model.SummaryFaults,
		Purpose:   llm.PurposeSummarize,
	}
	if in.FaultsAt != "" {
		var kept faultScripts
		if err := a.readAside(in.SessionID, in.FaultsAt, "fault script", &kept); err != nil {
			return SummarizeResult{}, err
		}
		base.Faults = kept.SummaryFaults
	}
	if a.Credentials != nil {
		cred, ok, err := a.Credentials.Select(in.Model.Provider, in.SessionID)
		if err != nil {
			return SummarizeResult{}, credentialsError(in.Model.Provider, err)
		}
		if ok {
			base.Secret = cred.Secret
		}
	}

	hb := a.startHeartbeat(ctx, "summarizing")
	var used []*agent.Usage
	summary, failed := summarizeCut(ctx, provider, base, cut, in.CustomInstructions, &used)
	hb.stop()
	usage := pricedSum(used, in.Model.Cost)
	if ctx.Err() != nil {
		return SummarizeResult{StopReason: agent.StopReasonAborted, ModelError: ModelErrorOf(llm.AbortedMessage(base)), Usage: usage}, ctx.Err()
	}
	if failed != nil {
		RedactMessage(failed, base.Secret)
		return SummarizeResult{TokensBefore: tokensBefore, StopReason: failed.StopReason, ModelError: ModelErrorOf(*failed), Usage: usage}, nil
	}

	entry := session.Entry{
		Type: session.TypeCompaction, ID: in.EntryID, ParentID: in.LeafID, Timestamp: time.Now().UTC(),
		Summary: summary, FirstKeptEntryID: cut.FirstKeptID, TokensBefore: tokensBefore, Usage: usage,
	}
	if _, err := a.Sessions.Append(in.SessionID, entry); err != nil {
		return SummarizeResult{}, storeError("write compaction entry", err)
	}
	return SummarizeResult{
		EntryID: in.EntryID, Summary: summary, FirstKeptEntryID: cut.FirstKeptID, TokensBefore: tokensBefore,
		MessageCount: 1 + len(items) - cut.FirstKeptIndex, StopReason: agent.StopReasonStop, Usage: usage,
	}, nil
}

// pricedSum is the usage the calls reported, added up and priced at the
// model's cost (nil: none reported any).
func pricedSum(usages []*agent.Usage, cost *agent.ModelCost) *agent.Usage {
	var spent agent.Spend
	for _, u := range usages {
		spent.Add(u)
	}
	if spent.Unmetered == len(usages) {
		return nil
	}
	u := spent.Usage().Priced(*cmp.Or(cost, &agent.ModelCost{}))
	return &u
}

// summarizeCut makes the summary calls of a cut: the history summary
// (merging the previous one), and for a split turn the summary of the
// turn's beginning, joined under its own heading. failed is the first
// call's message that did not succeed.
func summarizeCut(ctx context.Context, p llm.Provider, base llm.Request, cut compaction.Cut, custom string, used *[]*agent.Usage) (summary string, failed *agent.Message) {
	history := cut.PreviousSummary
	if len(cut.ToSummarize) > 0 || !cut.SplitTurn {
		text, bad := summaryCall(ctx, p, base, compaction.SummaryPrompt(compaction.PromptInput{
			Items: cut.ToSummarize, PreviousSummary: cut.PreviousSummary,
			CustomInstructions: custom, SplitTurn: cut.SplitTurn,
		}), used)
		if bad != nil {
			return "", bad
		}
		history = text
	}
	if !cut.SplitTurn {
		return history, nil
	}
	prefix, bad := summaryCall(ctx, p, base, compaction.TurnPrefixPrompt(compaction.PromptInput{
		Items: cut.SplitTurnPrefix, CustomInstructions: custom,
	}), used)
	if bad != nil {
		return "", bad
	}
	return compaction.JoinSplitTurnSummary(history, prefix), nil
}

// summaryCall sends one summary prompt as the single user message of a
// request and returns the answer's text, or the message when the call
// failed or answered nothing; used gets the usage the call reported.
func summaryCall(ctx context.Context, p llm.Provider, base llm.Request, prompt string, used *[]*agent.Usage) (string, *agent.Message) {
	req := base
	req.Messages = []agent.Message{agent.TextMessage(agent.RoleUser, prompt)}
	msg := complete(ctx, p, req)
	*used = append(*used, msg.Usage)
	if msg.StopReason == agent.StopReasonError || msg.StopReason == agent.StopReasonAborted {
		return "", &msg
	}
	text := strings.TrimSpace(msg.Text())
	if text == "" {
		empty := llm.ErrorMessage(req, EmptySummaryMessage)
		return "", &empty
	}
	return text, nil
}
