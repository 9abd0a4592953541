package live

import (
	"cmp"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// Snapshot kinds.
const (
	KindModel = "model"
	KindTool  = "tool"
)

// MaxSnapshotBytes bounds the text of one snapshot: the sum of the block
// tails (model) or the output tail (tool). Heartbeat details are stored in
// Temporal's mutable state on every heartbeat, so they must stay small
// whatever the length of the answer.
const MaxSnapshotBytes = 8 << 10

// Snapshot is the heartbeat detail of a running CallModel or RunTool
// activity: the message (or tool output) so far.
type Snapshot struct {
	// Kind is KindModel or KindTool.
	Kind string `json:"kind"`
	// EntryID is the entry the activity will write.
	EntryID string `json:"entryId"`
	// Attempt (CallModel) is the number of model calls already made for
	// this turn (retries count), so a retry's snapshots supersede a failed
	// attempt's.
	Attempt int `json:"attempt"`
	// Blocks (model) are the content blocks so far, by content index.
	Blocks []Block `json:"blocks,omitempty"`
	// ToolCallID and ToolName (tool) name the call being run.
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	// Output (tool) is the rolling tail of the tool's output: it replaces
	// the previous snapshot's, it does not add to it.
	Output string `json:"output,omitempty"`
	// OutputTokens (model) is the number of output tokens so far: the
	// provider's count when its stream reports one (llm.Delta
	// OutputTokens), else estimated from the streamed bytes; it never
	// goes down. The final count is the message's usage.
	OutputTokens int `json:"outputTokens,omitempty"`
	// Usage (model) is the usage so far: the provider's report of input
	// and cache tokens (SetUsage), OutputTokens as Output, priced with
	// SetPrice's prices; nil while the provider reported nothing and the
	// prices are unknown (OutputTokens says all there is).
	Usage *agent.Usage `json:"usage,omitempty"`
	// Push (heartbeat details only) is where the worker running the call
	// pushes its snapshots as they change (push.go); nil: read the
	// heartbeats.
	Push *Push `json:"push,omitempty"`
}

// Block is one content block of a streaming message. Its text
// covers bytes [Offset, Offset+len(Tail)) of the block's whole text (for a
// tool call, its argument JSON).
type Block struct {
	Index int `json:"index"`
	// Type is agent.BlockText, agent.BlockThinking or agent.BlockToolCall.
	Type       string `json:"type"`
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	// Offset is the number of bytes of the block dropped before Tail.
	Offset int `json:"offset,omitempty"`
	// Tail is the block's text from Offset on (always whole UTF-8
	// characters).
	Tail string `json:"tail"`
}

// End is the byte length of the block's text so far.
func (b Block) End() int { return b.Offset + len(b.Tail) }

// blockTypes maps a delta type to its snapshot block type (the content
// block types of agent.ContentBlock).
var blockTypes = map[string]string{
	agent.DeltaText: agent.BlockText, agent.DeltaThinking: agent.BlockThinking, agent.DeltaToolCall: agent.BlockToolCall,
}

// deltaType is the delta type of a snapshot block type ("" if unknown).
func deltaType(blockType string) string {
	for d, b := range blockTypes {
		if b == blockType {
			return d
		}
	}
	return ""
}

// Accumulator collects an activity's streamed output and makes
// bounded snapshots of it. It is safe for concurrent use: the provider adds
// deltas from its goroutine while the heartbeat ticker takes snapshots.
// Memory is bounded too: each block keeps at most 2*MaxSnapshotBytes.
type Accumulator struct {
	mu           sync.Mutex
	kind         string
	entryID      string
	attempt      int
	toolCallID   string
	toolName     string
	blocks       []*accBlock // sorted by index
	output       tailBuffer
	outputTokens int
	// reportedTokens is the provider's own count, when it gave one.
	reportedTokens int
	// reported is the provider's latest usage report (each count the
	// largest reported: they never go down); price, when set, prices the
	// snapshot's usage.
	reported agent.Usage
	price    *agent.ModelCost
	// streamed is the number of bytes of model output added.
	streamed int
	// watchers get a token (never blocking) on every change, each its
	// own (Watch: the heartbeat loop, a push hub's streams), so a change
	// is published at once instead of on a tick.
	watchers map[chan struct{}]bool
}

type accBlock struct {
	index                int
	typ                  string
	toolCallID, toolName string
	text                 tailBuffer
}

// tailBuffer keeps the end of a growing text and how many bytes it dropped.
type tailBuffer struct {
	buf     []byte
	dropped int
}

func (t *tailBuffer) add(s string) {
	t.buf = append(t.buf, s...)
	if len(t.buf) > 2*MaxSnapshotBytes {
		cut := len(t.buf) - MaxSnapshotBytes
		for cut < len(t.buf) && !utf8.RuneStart(t.buf[cut]) {
			cut++
		}
		n := copy(t.buf, t.buf[cut:])
		t.buf = t.buf[:n]
		t.dropped += cut
	}
}

// tail returns at most n bytes of the end of the text (whole characters)
// and the offset they start at.
func (t *tailBuffer) tail(n int) (offset int, s string) {
	if n <= 0 {
		return t.dropped + len(t.buf), ""
	}
	cut := 0
	if len(t.buf) > n {
		cut = len(t.buf) - n
		for cut < len(t.buf) && !utf8.RuneStart(t.buf[cut]) {
			cut++
		}
	}
	return t.dropped + cut, string(t.buf[cut:])
}

// NewModel returns the accumulator of a CallModel attempt that will
// write entryID; attempt is the number of model calls already made for the
// turn.
func NewModel(entryID string, attempt int) *Accumulator {
	return &Accumulator{kind: KindModel, entryID: entryID, attempt: attempt, watchers: map[chan struct{}]bool{}}
}

// NewTool returns the accumulator of a RunTool call that will write
// entryID.
func NewTool(entryID, toolCallID, toolName string) *Accumulator {
	return &Accumulator{kind: KindTool, entryID: entryID, toolCallID: toolCallID, toolName: toolName, watchers: map[chan struct{}]bool{}}
}

// bump records a change (caller holds mu).
func (a *Accumulator) bump() {
	for w := range a.watchers {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// Watch returns a channel that receives a value after the accumulator
// changed (at most one is pending: several changes in a row leave one),
// independent of other watchers, and the function that stops it.
func (a *Accumulator) Watch() (<-chan struct{}, func()) {
	w := make(chan struct{}, 1)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.watchers[w] = true
	return w, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		delete(a.watchers, w)
	}
}

// Add records one streamed piece of the answer (llm.Request.OnDelta). A
// delta of an unknown type is ignored.
func (a *Accumulator) Add(d llm.Delta) {
	typ := blockTypes[d.Type]
	if typ == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.block(d.ContentIndex, typ)
	if b.toolCallID == "" {
		b.toolCallID = d.ToolCallID
	}
	if b.toolName == "" {
		b.toolName = d.ToolName
	}
	b.text.add(d.Delta)
	a.streamed += len(d.Delta)
	a.updateTokens()
	a.bump()
}

// block returns the block of index, made with typ if new (caller holds mu).
func (a *Accumulator) block(index int, typ string) *accBlock {
	i, ok := slices.BinarySearchFunc(a.blocks, index, func(b *accBlock, index int) int { return cmp.Compare(b.index, index) })
	if !ok {
		a.blocks = slices.Insert(a.blocks, i, &accBlock{index: index, typ: typ})
	}
	return a.blocks[i]
}

// SetOutput replaces the tool output with s, the tool's own rolling tail
// (bash reports its accumulated output, replace-not-append).
func (a *Accumulator) SetOutput(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.output = tailBuffer{}
	a.output.add(s)
	a.bump()
}

// SetUsage records the provider's usage report so far (llm.Delta
// Usage): its input and cache counts go into the snapshots' Usage; its
// output count is the snapshots' OutputTokens. Until a provider reports
// one, and while its report lags behind the text, snapshots estimate the
// count from the streamed bytes (EstimateTokens); the count never goes
// down.
func (a *Accumulator) SetUsage(u agent.Usage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := &a.reported
	changed := u.Input > r.Input || u.CacheRead > r.CacheRead || u.CacheWrite > r.CacheWrite
	r.Input, r.CacheRead, r.CacheWrite = max(r.Input, u.Input), max(r.CacheRead, u.CacheRead), max(r.CacheWrite, u.CacheWrite)
	if u.Output > a.reportedTokens {
		a.reportedTokens = u.Output
	}
	if a.updateTokens() || changed {
		a.bump()
	}
}

// SetPrice sets the model's prices, so the snapshots' Usage carries
// its cost so far.
func (a *Accumulator) SetPrice(p agent.ModelCost) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.price = &p
}

// EstimateTokens is the output token estimate of n bytes of streamed
// text: a token is about four bytes of English or code.
func EstimateTokens(n int) int { return (n + 3) / 4 }

// updateTokens sets outputTokens from the report and the estimate and
// says whether it changed (caller holds mu).
func (a *Accumulator) updateTokens() bool {
	n := max(a.reportedTokens, EstimateTokens(a.streamed), a.outputTokens)
	if n == a.outputTokens {
		return false
	}
	a.outputTokens = n
	return true
}

// Snapshot returns the output so far, bounded by MaxSnapshotBytes: the
// latest blocks get the budget first (the last one is the one streaming),
// so an earlier block may be sent as its tail only, or with its Offset at
// its end and no text.
func (a *Accumulator) Snapshot() Snapshot {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := Snapshot{
		Kind: a.kind, EntryID: a.entryID, Attempt: a.attempt,
		ToolCallID: a.toolCallID, ToolName: a.toolName, OutputTokens: a.outputTokens,
	}
	if a.kind == KindTool {
		_, s.Output = a.output.tail(MaxSnapshotBytes)
	}
	if a.kind == KindModel && (a.reported != (agent.Usage{}) || a.price != nil) {
		u := a.reported
		u.Output = a.outputTokens
		var price agent.ModelCost
		if a.price != nil {
			price = *a.price
		}
		u = u.Priced(price)
		s.Usage = &u
	}
	if len(a.blocks) == 0 {
		return s
	}
	s.Blocks = make([]Block, len(a.blocks))
	budget := MaxSnapshotBytes
	for i := len(a.blocks) - 1; i >= 0; i-- {
		b := a.blocks[i]
		off, tail := b.text.tail(budget)
		budget -= len(tail)
		s.Blocks[i] = Block{
			Index: b.index, Type: b.typ, ToolCallID: b.toolCallID, ToolName: b.toolName,
			Offset: off, Tail: tail,
		}
	}
	return s
}
