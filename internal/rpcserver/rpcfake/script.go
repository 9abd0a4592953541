package rpcfake

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/retry"
	"github.com/durableagent/durableagent/workflows"
)

// Chain describes a retry chain for the RetryChain script.
type Chain struct {
	// Errors are the model's error messages, one per call, before it
	// answers Reply.
	Errors []string
	// MaxRetries is retry.maxRetries (0: 3).
	MaxRetries int
	// BaseDelay is retry.baseDelayMs as a duration; attempt n waits
	// BaseDelay * 2^(n-1).
	BaseDelay time.Duration
	// Reply is the final answer ("": "ok").
	Reply string
}

// RetryChain is a Script that emits the events of SPEC sections 3-5 for a
// model that fails with c.Errors and then answers: per failure agent_start,
// message_end, agent_end {willRetry} and auto_retry_start; a real timer
// for the backoff that abort_retry and abort cancel (auto_retry_end
// {success:false, finalError:"Retry cancelled"}); auto_retry_end
// {success:true} after a successful retry, or {success:false,
// attempt:maxRetries} when retries run out; prompt_end last.
func RetryChain(c Chain) Script {
	if c.MaxRetries == 0 {
		c.MaxRetries = 3
	}
	if c.Reply == "" {
		c.Reply = "ok"
	}
	return func(r *Run) {
		attempt := 0
		for call := 0; ; call++ {
			r.Emit(agent.Event{Type: agent.EventAgentStart})
			if call >= len(c.Errors) {
				msg := agent.TextMessage(agent.RoleAssistant, c.Reply)
				msg.StopReason = agent.StopReasonStop
				r.Emit(agent.Event{Type: agent.EventMessageEnd, EntryID: fmt.Sprintf("e%d", call+2), Message: &msg})
				r.Emit(agent.Event{Type: agent.EventAgentEnd, StopReason: agent.StopReasonStop})
				if attempt > 0 {
					r.Emit(agent.Event{Type: agent.EventAutoRetryEnd, Success: true, Attempt: attempt})
				}
				r.Emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusCompleted})
				return
			}
			errText := c.Errors[call]
			msg := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonError, ErrorMessage: errText}
			r.Emit(agent.Event{Type: agent.EventMessageEnd, EntryID: fmt.Sprintf("e%d", call+2), Message: &msg})
			attempt++
			if attempt > c.MaxRetries {
				r.Emit(agent.Event{Type: agent.EventAgentEnd, StopReason: agent.StopReasonError, ErrorMessage: errText})
				r.Emit(agent.Event{Type: agent.EventAutoRetryEnd, Attempt: attempt - 1, FinalError: errText})
				r.Emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusFailed, ErrorMessage: errText})
				return
			}
			delay := c.BaseDelay << (attempt - 1)
			r.Emit(agent.Event{Type: agent.EventAgentEnd, WillRetry: true, StopReason: agent.StopReasonError, ErrorMessage: errText})
			r.Emit(agent.Event{Type: agent.EventAutoRetryStart, Attempt: attempt, MaxAttempts: c.MaxRetries,
				DelayMs: delay.Milliseconds(), ErrorMessage: errText})
			if sig := r.wait(delay); sig != "" {
				r.Emit(agent.Event{Type: agent.EventAutoRetryEnd, Attempt: attempt, FinalError: retry.CancelledMessage})
				if sig == agent.SignalAbort {
					r.Emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusAborted})
					return
				}
				r.Emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusFailed,
					ErrorMessage: fmt.Sprintf("%s (last error: %s)", retry.CancelledMessage, errText)})
				return
			}
		}
	}
}

// wait waits d unless abort_retry or abort arrives first (returned).
// set_auto_retry signals are noted and ignored, as the workflow applies
// them at the next decision.
func (r *Run) wait(d time.Duration) string {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return ""
		case s := <-r.signals:
			if !strings.HasPrefix(s, agent.SignalSetAutoRetry) {
				return s
			}
		}
	}
}

// SummaryRetryUntilAborted is a CompactFunc for b: the summary call
// failed with err and waits delayMs to retry (auto_retry_start), until
// abort_retry reaches the compaction (auto_retry_end "Retry cancelled",
// and the compaction fails); abort fails it without the event.
func SummaryRetryUntilAborted(b *Backend, err string, delayMs int64) func(context.Context, string, func(agent.Event)) (workflows.CompactResult, error) {
	return func(ctx context.Context, _ string, onRetry func(agent.Event)) (workflows.CompactResult, error) {
		onRetry(agent.Event{Type: agent.EventAutoRetryStart, Attempt: 1, MaxAttempts: 3, DelayMs: delayMs, ErrorMessage: err})
		select {
		case sig := <-b.CompactSignals():
			if sig != agent.SignalAbortRetry {
				return workflows.CompactResult{}, fmt.Errorf("compaction of session %s aborted", b.SessionID())
			}
		case <-ctx.Done():
			return workflows.CompactResult{}, ctx.Err()
		}
		onRetry(agent.Event{Type: agent.EventAutoRetryEnd, Attempt: 1, FinalError: retry.CancelledMessage})
		return workflows.CompactResult{}, fmt.Errorf("compaction of session %s failed: %s (last error: %s)", b.SessionID(), retry.CancelledMessage, err)
	}
}
