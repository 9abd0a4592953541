// Package scripted is a deterministic fake model provider for demos and
// tests: it replays a fault script, then answers with a fixed text.
//
// A fault script is a list of strings, one per model call of a prompt
// (Request.Attempt+Request.FaultOffset, the model calls the prompt already
// made, errors and tool-call turns included, as the activity counts them
// in the session, indexes it, so the script replays identically after a
// worker restart). Each element is one of:
//
//	"503 Service Unavailable"             an error message, as a provider would send it
//	"[529 overloaded_error] Overloaded"   the same with structured status and error type
//	"overflow"                            a context-overflow error
//	"hang" / "hang:30s"                   no answer until ctx ends (or for the duration, then answer)
//	"ok" / ""                             a normal answer
//	"text:SOME TEXT"                      a final answer with that text
//	`tool:NAME ARGS`                      one call of tool NAME with the JSON object ARGS
//	                                      (ARGS may be left out: {}), e.g.
//	                                      `tool:bash {"command":"go test ./..."}`
//	`tools:[{"name":N,"arguments":{...}},...]`
//	                                      several tool calls in one answer, in order
//	                                      (a missing "arguments" is {})
//	`badtool:NAME TEXT`                   one call of tool NAME whose arguments are TEXT,
//	                                      which is not a JSON object: a model that sent
//	                                      invalid arguments (stored as llm.ToolArguments does)
//	`usage:USAGE ELEMENT`                 ELEMENT (an answer: ok, text:, tool:, tools:, badtool:
//	                                      or hang:DURATION), whose stream reports USAGE, a JSON
//	                                      object of token counts {"input", "cacheRead",
//	                                      "cacheWrite", "output"} (each optional, at least one
//	                                      positive), e.g.
//	                                      `usage:{"input":1200,"cacheRead":800,"output":40} text:Hi.`
//
// A tool answer is a short text ("Running bash.") followed by the
// toolCall blocks, with StopReason "toolUse" and the call ids
// call_<attempt>_<i> (i counts the calls of the answer from 0). Tool
// names are letters, digits, '_', '-' and '.'. A bad tool or text element
// (no name, arguments that are not a JSON object, a tools: value that is
// not a non-empty JSON array of {name, arguments}, an empty text) is
// rejected by ParseFault and ValidateScript with a one-line error naming
// it. Any other element is an error text. Calls past the end of the
// script answer normally.
//
// Answers stream (docs/tools.md, "Scripting the offline model"): with
// Request.OnDelta set, text goes word by word and each tool call's
// arguments in two or three pieces, Options.StreamDelay apart, after
// Options.Latency; cancelling ctx mid-stream yields an aborted message. A
// usage: element's USAGE is reported the way providers report usage
// mid-stream and is the answer's usage (its output estimated when left
// out); without one the answer's usage is an estimate (characters / 4).
//
// A summary request (Request.Purpose == llm.PurposeSummarize) replays the
// same kinds of faults from its own script (the activity passes the
// model's summary fault script as Request.Faults) and then answers with a
// short deterministic summary in the compaction format, built from the
// number of messages in the transcript it was given (see SummaryReply).
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
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
	// StreamDelay is waited between the streamed pieces of an answer
	// (words, tool-call argument chunks), honouring cancellation
	// (0: no pause).
	StreamDelay time.Duration
}

// Provider is the scripted provider.
type Provider struct{ opts Options }

// New returns a scripted provider.
func New(opts Options) *Provider { return &Provider{opts: opts} }

// Fault is one parsed script element.
type Fault struct {
	// Kind is "ok", "error", "hang", "text" or "tool".
	Kind string
	// Text is the error text of an error, the answer of a text element.
	Text string
	// Status and Type are the structured fields of an error.
	Status int
	Type   string
	// Hang is how long a hang lasts (0: until cancelled).
	Hang time.Duration
	// ToolCalls are the calls of a tool answer, in order.
	ToolCalls []ToolCall
	// Usage, set by a usage: element, is what the answer's stream
	// reports (nil: no report, the usage is estimated).
	Usage *agent.Usage
}

// ToolCall is one scripted tool call: the tool's name and its arguments,
// a JSON object.
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Element prefixes of the script grammar (case-insensitive).
const (
	prefixText  = "text:"
	prefixTool  = "tool:"
	prefixTools = "tools:"
	prefixBad   = "badtool:"
	prefixUsage = "usage:"
)

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// ParseFault parses one script element.
func ParseFault(s string) (Fault, error) {
	s = strings.TrimSpace(s)
	switch {
	case hasPrefixFold(s, prefixUsage):
		return parseUsage(s)
	case hasPrefixFold(s, prefixText):
		text := strings.TrimSpace(s[len(prefixText):])
		if text == "" {
			return Fault{}, fmt.Errorf("scripted fault %q: empty text (want e.g. text:All done.)", s)
		}
		return Fault{Kind: "text", Text: text}, nil
	case hasPrefixFold(s, prefixTool):
		call, err := parseTool(s[len(prefixTool):])
		if err != nil {
			return Fault{}, fmt.Errorf("scripted fault %q: %v (want e.g. tool:bash {\"command\":\"ls\"})", s, err)
		}
		return Fault{Kind: "tool", ToolCalls: []ToolCall{call}}, nil
	case hasPrefixFold(s, prefixBad):
		rest := strings.TrimSpace(s[len(prefixBad):])
		name, text, _ := strings.Cut(rest, " ")
		if name == "" {
			return Fault{}, fmt.Errorf("scripted fault %q: missing tool name (want e.g. badtool:edit {\"path\": )", s)
		}
		if err := checkName(name); err != nil {
			return Fault{}, fmt.Errorf("scripted fault %q: %v", s, err)
		}
		if llm.IsArgumentsObject(json.RawMessage(text)) {
			return Fault{}, fmt.Errorf("scripted fault %q: the arguments are a valid JSON object (use tool:)", s)
		}
		return Fault{Kind: "tool", ToolCalls: []ToolCall{{Name: name, Arguments: llm.ToolArguments(text)}}}, nil
	case hasPrefixFold(s, prefixTools):
		calls, err := parseTools(s[len(prefixTools):])
		if err != nil {
			return Fault{}, fmt.Errorf("scripted fault %q: %v (want e.g. tools:[{\"name\":\"ls\",\"arguments\":{}}])", s, err)
		}
		return Fault{Kind: "tool", ToolCalls: calls}, nil
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

// scriptUsage is the JSON object of a usage: element: token counts only.
type scriptUsage struct {
	Input      int `json:"input"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	Output     int `json:"output"`
}

// parseUsage parses a usage: element: the JSON object of counts, then
// the answer element it applies to.
func parseUsage(s string) (Fault, error) {
	const want = `(want e.g. usage:{"input":1200,"output":40} text:Hi.)`
	rest := strings.TrimSpace(s[len(prefixUsage):])
	var u scriptUsage
	dec := json.NewDecoder(strings.NewReader(rest))
	dec.DisallowUnknownFields()
	if !strings.HasPrefix(rest, "{") || dec.Decode(&u) != nil {
		return Fault{}, fmt.Errorf("scripted fault %q: usage is not a JSON object of token counts input, cacheRead, cacheWrite, output %s", s, want)
	}
	if u.Input < 0 || u.CacheRead < 0 || u.CacheWrite < 0 || u.Output < 0 {
		return Fault{}, fmt.Errorf("scripted fault %q: negative token count in usage", s)
	}
	if u == (scriptUsage{}) {
		return Fault{}, fmt.Errorf("scripted fault %q: usage reports no tokens %s", s, want)
	}
	elem := strings.TrimSpace(rest[dec.InputOffset():])
	if hasPrefixFold(elem, prefixUsage) {
		return Fault{}, fmt.Errorf("scripted fault %q: usage given twice", s)
	}
	f, err := ParseFault(elem)
	if err != nil {
		return Fault{}, err
	}
	if f.Kind == "error" || f.Kind == "hang" && f.Hang == 0 {
		return Fault{}, fmt.Errorf("scripted fault %q: usage applies to an answer (ok, text:, tool:, tools:, badtool:, hang:DURATION), not to %q", s, elem)
	}
	f.Usage = &agent.Usage{Input: u.Input, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Output: u.Output}
	return f, nil
}

// parseTool parses "NAME ARGS" of a tool: element.
func parseTool(s string) (ToolCall, error) {
	s = strings.TrimSpace(s)
	end := strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '{' })
	if end < 0 {
		end = len(s)
	}
	return checkCall(ToolCall{Name: s[:end], Arguments: json.RawMessage(strings.TrimSpace(s[end:]))})
}

// parseTools parses the JSON array of a tools: element.
func parseTools(s string) ([]ToolCall, error) {
	s = strings.TrimSpace(s)
	var items []json.RawMessage
	if !strings.HasPrefix(s, "[") || json.Unmarshal([]byte(s), &items) != nil {
		return nil, fmt.Errorf("not a JSON array of {\"name\", \"arguments\"} objects")
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("no tool calls in the array")
	}
	calls := make([]ToolCall, 0, len(items))
	for i, item := range items {
		var c ToolCall
		dec := json.NewDecoder(bytes.NewReader(item))
		dec.DisallowUnknownFields()
		if !bytes.HasPrefix(bytes.TrimSpace(item), []byte("{")) || dec.Decode(&c) != nil {
			return nil, fmt.Errorf("tool call %d is not a {\"name\", \"arguments\"} object", i)
		}
		c, err := checkCall(c)
		if err != nil {
			return nil, fmt.Errorf("tool call %d: %v", i, err)
		}
		calls = append(calls, c)
	}
	return calls, nil
}

// checkCall checks a scripted call's name and arguments (checkName,
// objectArguments) and returns it with the arguments compacted.
func checkCall(c ToolCall) (ToolCall, error) {
	if c.Name == "" {
		return ToolCall{}, fmt.Errorf("missing tool name")
	}
	if err := checkName(c.Name); err != nil {
		return ToolCall{}, err
	}
	raw, err := objectArguments(c.Name, c.Arguments)
	if err != nil {
		return ToolCall{}, err
	}
	return ToolCall{Name: c.Name, Arguments: raw}, nil
}

// checkName accepts the tool names providers accept, and '.'.
func checkName(name string) error {
	for _, r := range name {
		if !(r == '_' || r == '-' || r == '.' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return fmt.Errorf("bad tool name %q (letters, digits, '_', '-', '.')", name)
		}
	}
	return nil
}

// objectArguments checks that args is a JSON object ({} when empty or
// null) and returns it compacted.
func objectArguments(name string, args json.RawMessage) (json.RawMessage, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return json.RawMessage("{}"), nil
	}
	var buf bytes.Buffer
	if args[0] != '{' || json.Compact(&buf, args) != nil {
		return nil, fmt.Errorf("arguments of %s are not a JSON object: %s", name, line.Preview(string(args), 60))
	}
	return json.RawMessage(buf.Bytes()), nil
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
	if i := req.Attempt + req.FaultOffset; i >= 0 && i < len(req.Faults) {
		f, err := ParseFault(req.Faults[i])
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
	var m agent.Message
	switch fault.Kind {
	case "tool":
		m = toolAnswer(req, fault.ToolCalls)
	case "text":
		m = textAnswer(fault.Text)
	default:
		reply := p.opts.Reply
		switch {
		case req.Purpose == llm.PurposeSummarize:
			reply = SummaryReply(lastUserText(req.Messages))
		case reply == "":
			reply = "Scripted reply to: " + lastUserText(req.Messages) + imageNote(req.Messages)
		}
		m = textAnswer(reply)
	}
	if req.ThinkingLevel != "" && req.ThinkingLevel != llm.ThinkingOff && req.Purpose != llm.PurposeSummarize {
		// A visible trace of the thinking level, as a real model's
		// thinking block would come first.
		m.Content = append([]agent.ContentBlock{{Type: agent.BlockThinking,
			Text: "Thinking (" + req.ThinkingLevel + ") about: " + lastUserText(req.Messages)}}, m.Content...)
	}
	m.Provider, m.Model = req.Provider, req.Model
	m.Usage = &agent.Usage{Input: estimate(req.Messages), Output: outputTokens(m)}
	if fault.Usage != nil {
		u := *fault.Usage
		if u.Output == 0 {
			u.Output = m.Usage.Output
		}
		m.Usage = &u
	}
	if err := p.stream(ctx, req, m, fault.Usage != nil); err != nil {
		return llm.AbortedMessage(req)
	}
	return m
}

func textAnswer(text string) agent.Message {
	m := agent.TextMessage(agent.RoleAssistant, text)
	m.StopReason = agent.StopReasonStop
	return m
}

// toolAnswer is the answer of a tool element: "Running NAME[, NAME...]."
// then the calls, with ids call_<attempt>_<i>.
func toolAnswer(req llm.Request, calls []ToolCall) agent.Message {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	m := agent.TextMessage(agent.RoleAssistant, "Running "+strings.Join(names, ", ")+".")
	for i, c := range calls {
		m.Content = append(m.Content, agent.ContentBlock{Type: "toolCall", ToolCall: &agent.ToolCall{
			ID:        fmt.Sprintf("call_%d_%d", req.Attempt, i),
			Name:      c.Name,
			Arguments: append(json.RawMessage(nil), c.Arguments...),
		}})
	}
	m.StopReason = agent.StopReasonToolUse
	return m
}

// outputTokens estimates the answer's tokens as characters / 4.
func outputTokens(m agent.Message) int {
	n := 0
	for _, b := range m.Content {
		n += len(b.Text)
		if b.ToolCall != nil {
			n += len(b.ToolCall.Name) + len(b.ToolCall.Arguments)
		}
	}
	return (n + 3) / 4
}

// stream reports the answer's pieces to req.OnDelta: text word by word,
// each tool call's arguments in two or three chunks, waiting StreamDelay
// between pieces. With report, m's usage is reported too: its input and
// cache counts first, the whole of it last. It fails when ctx ends first.
func (p *Provider) stream(ctx context.Context, req llm.Request, m agent.Message, report bool) error {
	var pieces []llm.Delta
	for i, b := range m.Content {
		switch {
		case b.Type == "toolCall" && b.ToolCall != nil:
			for _, c := range thirds(string(b.ToolCall.Arguments)) {
				pieces = append(pieces, llm.Delta{Type: agent.DeltaToolCall, ContentIndex: i, Delta: c,
					ToolCallID: b.ToolCall.ID, ToolName: b.ToolCall.Name})
			}
		case b.Type == "text" || b.Type == "thinking":
			typ := agent.DeltaText
			if b.Type == "thinking" {
				typ = agent.DeltaThinking
			}
			for _, w := range words(b.Text) {
				pieces = append(pieces, llm.Delta{Type: typ, ContentIndex: i, Delta: w})
			}
		}
	}
	if report {
		first := agent.Usage{Input: m.Usage.Input, CacheRead: m.Usage.CacheRead, CacheWrite: m.Usage.CacheWrite}
		last := *m.Usage
		pieces = append(append([]llm.Delta{{Usage: &first}}, pieces...), llm.Delta{Usage: &last})
	}
	sent := 0 // pieces of the answer reported
	for _, d := range pieces {
		if d.Type != "" {
			// The pause is between two pieces of the answer; a usage
			// report comes with the piece next to it.
			if sent > 0 {
				if err := sleep(ctx, p.opts.StreamDelay); err != nil {
					return err
				}
			}
			sent++
		}
		req.Emit(d)
	}
	return ctx.Err()
}

// words splits text into pieces that each hold one word and the white
// space before it (the first also any text before its first word); they
// join to text.
func words(text string) []string {
	var out []string
	start, inWord := 0, false
	for i, r := range text {
		switch {
		case !unicode.IsSpace(r):
			inWord = true
		case inWord:
			out = append(out, text[start:i])
			start, inWord = i, false
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// thirds splits s into up to three pieces at rune boundaries ({} gives
// two); they join to s.
func thirds(s string) []string {
	size := (len(s) + 2) / 3
	var out []string
	for len(s) > 0 {
		n := min(size, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
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

// imageNote says which images the last user message carries
// (" [image/png, image/jpeg]"), "" without images: a visible trace that
// they reached the model.
func imageNote(msgs []agent.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != agent.RoleUser {
			continue
		}
		var types []string
		for _, img := range msgs[i].Images() {
			types = append(types, img.MimeType)
		}
		if len(types) == 0 {
			return ""
		}
		return " [" + strings.Join(types, ", ") + "]"
	}
	return ""
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
