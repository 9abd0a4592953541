// Package scripted is a deterministic fake model provider for demos and
// tests: it replays a fault script, then answers with a fixed text.
//
// A fault script is a list of strings, one per model call of a prompt
// (Request.Attempt indexes it, so the script replays identically after a
// worker restart). Each element is one of:
//
//	"503 Service Unavailable"             an error message, as a provider would send it
//	"[529 overloaded_error] Overloaded"   the same with structured status and error type
//	"overflow"                            a context-overflow error
//	"hang" / "hang:30s"                   no answer until ctx ends (or for the duration, then answer)
//	"ok" / ""                             a normal answer
//
// Calls past the end of the script answer normally.
//
// A summary request (Request.Purpose == llm.PurposeSummarize, or the
// compaction summary system prompt) replays the same kinds of faults from
// its own script (the activity passes the model's summary fault script as
// Request.Faults) and then answers with a short deterministic summary in
// the compaction format, built from the number of messages in the
// transcript it was given (see SummaryReply).
package scripted

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// OverflowText is the error text of the "overflow" fault (an Anthropic
// wording that the classifier knows).
const OverflowText = "prompt is too long: 213462 tokens > 200000 maximum"

// Options configure the provider. The zero value answers at once.
type Options struct {
	// Reply is the answer text; "" answers "Scripted reply to: <prompt>".
	Reply string
	// Latency is waited before every answer (honouring cancellation).
	Latency time.Duration
}

// Provider is the scripted provider.
type Provider struct{ opts Options }

// New returns a scripted provider.
func New(opts Options) *Provider { return &Provider{opts: opts} }

// Fault is one parsed script element.
type Fault struct {
	// Kind is "ok", "error" or "hang".
	Kind string
	Text string
	// Status and Type are the structured fields of an error.
	Status int
	Type   string
	// Hang is how long a hang lasts (0: until cancelled).
	Hang time.Duration
}

// ParseFault parses one script element.
func ParseFault(s string) (Fault, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || strings.EqualFold(s, "ok"):
		return Fault{Kind: "ok"}, nil
	case strings.EqualFold(s, "overflow"):
		return Fault{Kind: "error", Text: OverflowText, Status: 400, Type: "invalid_request_error"}, nil
	case strings.EqualFold(s, "hang"):
		return Fault{Kind: "hang"}, nil
	case strings.HasPrefix(strings.ToLower(s), "hang:"):
		d, err := time.ParseDuration(s[len("hang:"):])
		if err != nil || d < 0 {
			return Fault{}, fmt.Errorf("scripted fault %q: bad hang duration (want e.g. hang:30s)", s)
		}
		return Fault{Kind: "hang", Hang: d}, nil
	case strings.HasPrefix(s, "["):
		end := strings.Index(s, "]")
		if end < 0 {
			return Fault{}, fmt.Errorf("scripted fault %q: missing ']' after structured fields", s)
		}
		f := Fault{Kind: "error", Text: strings.TrimSpace(s[end+1:])}
		for _, field := range strings.Fields(s[1:end]) {
			if n, err := strconv.Atoi(field); err == nil {
				f.Status = n
			} else {
				f.Type = field
			}
		}
		if f.Text == "" {
			return Fault{}, fmt.Errorf("scripted fault %q: empty error text", s)
		}
		return f, nil
	}
	return Fault{Kind: "error", Text: s}, nil
}

// ValidateScript checks every element of a fault script.
func ValidateScript(script []string) error {
	for _, s := range script {
		if _, err := ParseFault(s); err != nil {
			return err
		}
	}
	return nil
}

// Complete implements llm.Provider.
func (p *Provider) Complete(ctx context.Context, req llm.Request) agent.Message {
	if err := sleep(ctx, p.opts.Latency); err != nil {
		return llm.AbortedMessage(req)
	}
	fault := Fault{Kind: "ok"}
	if req.Attempt >= 0 && req.Attempt < len(req.Faults) {
		f, err := ParseFault(req.Faults[req.Attempt])
		if err != nil {
			return llm.ErrorMessage(req, err.Error())
		}
		fault = f
	}
	switch fault.Kind {
	case "error":
		m := llm.ErrorMessage(req, fault.Text)
		// No usage on errors: providers report none for a failed call, and
		// a usage above the window would read as a silent overflow.
		m.ErrorStatus, m.ErrorType = fault.Status, fault.Type
		return m
	case "hang":
		if fault.Hang == 0 {
			<-ctx.Done()
			return llm.AbortedMessage(req)
		}
		if err := sleep(ctx, fault.Hang); err != nil {
			return llm.AbortedMessage(req)
		}
	}
	reply := p.opts.Reply
	switch {
	case IsSummaryRequest(req):
		reply = SummaryReply(lastUserText(req.Messages))
	case reply == "":
		reply = "Scripted reply to: " + lastUserText(req.Messages)
	}
	m := agent.TextMessage(agent.RoleAssistant, reply)
	m.Provider, m.Model = req.Provider, req.Model
	m.StopReason = agent.StopReasonStop
	m.Usage = &agent.Usage{Input: estimate(req.Messages), Output: (len(reply) + 3) / 4}
	return m
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func lastUserText(msgs []agent.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agent.RoleUser {
			return msgs[i].Text()
		}
	}
	return ""
}

// estimate approximates input tokens as characters / 4, like the
// compaction estimator, so threshold compaction can be exercised.
func estimate(msgs []agent.Message) int {
	n := 0
	for _, m := range msgs {
		for _, b := range m.Content {
			n += len(b.Text)
			if b.ToolCall != nil {
				n += len(b.ToolCall.Arguments)
			}
		}
	}
	return (n + 3) / 4
}
