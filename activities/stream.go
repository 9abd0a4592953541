package activities

import (
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/durableagent/durableagent/internal/llm"
)

// Live output. A running CallModel or RunTool activity publishes what it
// has produced so far as its heartbeat details (one StreamSnapshot);
// followers read them with DescribeWorkflowExecution and turn successive
// snapshots into message_update and tool_execution_update events
// (internal/control). Snapshots are for display only: the entry the
// activity writes, and the message_end / tool_execution_end event, stay
// authoritative.

// Snapshot kinds.
const (
	SnapshotModel = "model"
	SnapshotTool  = "tool"
)

// Snapshot block types (the content block types of agent.ContentBlock).
const (
	BlockText     = "text"
	BlockThinking = "thinking"
	BlockToolCall = "toolCall"
)

// MaxSnapshotBytes bounds the text of one snapshot: the sum of the block
// tails (model) or the output tail (tool). Heartbeat details are stored in
// Temporal's mutable state on every heartbeat, so they must stay small
// whatever the length of the answer.
const MaxSnapshotBytes = 8 << 10

// StreamSnapshot is the heartbeat detail of a running CallModel or RunTool
// activity: the message (or tool output) so far.
type StreamSnapshot struct {
	// Kind is SnapshotModel or SnapshotTool.
	Kind string `json:"kind"`
	// EntryID is the entry the activity will write.
	EntryID string `json:"entryId"`
	// Attempt (CallModel) is the number of model calls already made for
	// this turn (retries count), so a retry's snapshots supersede a failed
	// attempt's.
	Attempt int `json:"attempt"`
	// Blocks (model) are the content blocks so far, by content index.
	Blocks []SnapshotBlock `json:"blocks,omitempty"`
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
}

// SnapshotBlock is one content block of a streaming message. Its text
// covers bytes [Offset, Offset+len(Tail)) of the block's whole text (for a
// tool call, its argument JSON).
type SnapshotBlock struct {
	Index int `json:"index"`
	// Type is BlockText, BlockThinking or BlockToolCall.
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
func (b SnapshotBlock) End() int { return b.Offset + len(b.Tail) }

// BlockType is the snapshot block type of a delta type ("" if unknown).
func BlockType(deltaType string) string {
	switch deltaType {
	case llm.DeltaText:
		return BlockText
	case llm.DeltaThinking:
		return BlockThinking
	case llm.DeltaToolCall:
		return BlockToolCall
	}
	return ""
}

// DeltaType is the delta (message_update) type of a snapshot block type.
func DeltaType(blockType string) string {
	switch blockType {
	case BlockText:
		return llm.DeltaText
	case BlockThinking:
		return llm.DeltaThinking
	case BlockToolCall:
		return llm.DeltaToolCall
	}
	return ""
}

// StreamAccumulator collects an activity's streamed output and makes
// bounded snapshots of it. It is safe for concurrent use: the provider adds
// deltas from its goroutine while the heartbeat ticker takes snapshots.
// Memory is bounded too: each block keeps at most 2*MaxSnapshotBytes.
type StreamAccumulator struct {
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
	// streamed is the number of bytes of model output added.
	streamed int
	version  uint64
	// changed gets a token (never blocking) on every change, so a
	// heartbeat loop can publish a change at once instead of on a tick.
	changed chan struct{}
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

func (t *tailBuffer) len() int { return t.dropped + len(t.buf) }

// tail returns at most n bytes of the end of the text (whole characters)
// and the offset they start at.
func (t *tailBuffer) tail(n int) (offset int, s string) {
	if n <= 0 {
		return t.len(), ""
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

// NewModelStream returns the accumulator of a CallModel attempt that will
// write entryID; attempt is the number of model calls already made for the
// turn.
func NewModelStream(entryID string, attempt int) *StreamAccumulator {
	return &StreamAccumulator{kind: SnapshotModel, entryID: entryID, attempt: attempt, changed: make(chan struct{}, 1)}
}

// NewToolStream returns the accumulator of a RunTool call that will write
// entryID.
func NewToolStream(entryID, toolCallID, toolName string) *StreamAccumulator {
	return &StreamAccumulator{kind: SnapshotTool, entryID: entryID, toolCallID: toolCallID, toolName: toolName,
		changed: make(chan struct{}, 1)}
}

// Changed receives a value after the accumulator changed (at most one is
// pending: several changes in a row leave one). Nil for an accumulator not
// made by NewModelStream or NewToolStream.
func (a *StreamAccumulator) Changed() <-chan struct{} { return a.changed }

// bump records a change (caller holds mu).
func (a *StreamAccumulator) bump() {
	a.version++
	select {
	case a.changed <- struct{}{}:
	default:
	}
}

// Add records one streamed piece of the answer (llm.Request.OnDelta). A
// delta of an unknown type is ignored.
func (a *StreamAccumulator) Add(d llm.Delta) {
	typ := BlockType(d.Type)
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
func (a *StreamAccumulator) block(index int, typ string) *accBlock {
	i := sort.Search(len(a.blocks), func(i int) bool { return a.blocks[i].index >= index })
	if i < len(a.blocks) && a.blocks[i].index == index {
		return a.blocks[i]
	}
	b := &accBlock{index: index, typ: typ}
	a.blocks = append(a.blocks, nil)
	copy(a.blocks[i+1:], a.blocks[i:])
	a.blocks[i] = b
	return b
}

// AddOutput appends tool output; snapshots carry its last
// MaxSnapshotBytes.
func (a *StreamAccumulator) AddOutput(s string) {
	if s == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.output.add(s)
	a.bump()
}

// SetOutput replaces the tool output with s, the tool's own rolling tail
// (bash reports its accumulated output, replace-not-append).
func (a *StreamAccumulator) SetOutput(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.output = tailBuffer{}
	a.output.add(s)
	a.bump()
}

// SetOutputTokens records the provider's output token count so far (a
// usage report on the wire). Until a provider reports one, and while its
// report lags behind the text, snapshots estimate the count from the
// streamed bytes (EstimateTokens); the count never goes down.
func (a *StreamAccumulator) SetOutputTokens(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n > a.reportedTokens {
		a.reportedTokens = n
	}
	if a.updateTokens() {
		a.bump()
	}
}

// EstimateTokens is the output token estimate of n bytes of streamed
// text: a token is about four bytes of English or code.
func EstimateTokens(n int) int { return (n + 3) / 4 }

// updateTokens sets outputTokens from the report and the estimate and
// says whether it changed (caller holds mu).
func (a *StreamAccumulator) updateTokens() bool {
	n := max(a.reportedTokens, EstimateTokens(a.streamed), a.outputTokens)
	if n == a.outputTokens {
		return false
	}
	a.outputTokens = n
	return true
}

// Version counts the changes; a heartbeat loop can skip a snapshot when it
// has not changed since the last one it sent.
func (a *StreamAccumulator) Version() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.version
}

// Snapshot returns the output so far, bounded by MaxSnapshotBytes: the
// latest blocks get the budget first (the last one is the one streaming),
// so an earlier block may be sent as its tail only, or with its Offset at
// its end and no text.
func (a *StreamAccumulator) Snapshot() StreamSnapshot {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := StreamSnapshot{
		Kind: a.kind, EntryID: a.entryID, Attempt: a.attempt,
		ToolCallID: a.toolCallID, ToolName: a.toolName, OutputTokens: a.outputTokens,
	}
	if a.kind == SnapshotTool {
		_, s.Output = a.output.tail(MaxSnapshotBytes)
	}
	if len(a.blocks) == 0 {
		return s
	}
	s.Blocks = make([]SnapshotBlock, len(a.blocks))
	budget := MaxSnapshotBytes
	for i := len(a.blocks) - 1; i >= 0; i-- {
		b := a.blocks[i]
		off, tail := b.text.tail(budget)
		budget -= len(tail)
		s.Blocks[i] = SnapshotBlock{
			Index: b.index, Type: b.typ, ToolCallID: b.toolCallID, ToolName: b.toolName,
			Offset: off, Tail: tail,
		}
	}
	return s
}
