package live

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// Partial is the assistant message one model call's message_update
// deltas have built so far: its blocks by content index, each with its
// delta type, tool call and text (for a tool call, its argument JSON so
// far). Consumers keep one per streamed message; a delta of a later
// Attempt starts a new one.
type Partial struct {
	EntryID string
	Attempt int
	blocks  map[int]*PartialBlock
}

// PartialBlock is one content block of a Partial.
type PartialBlock struct {
	Index int
	// Type is a delta type (agent.DeltaText, ...).
	Type                 string
	ToolCallID, ToolName string
	text                 strings.Builder
}

// Text is the block's text so far.
func (b *PartialBlock) Text() string { return b.text.String() }

// NewPartial is the empty message of an entry's attempt.
func NewPartial(entryID string, attempt int) *Partial {
	return &Partial{EntryID: entryID, Attempt: attempt, blocks: map[int]*PartialBlock{}}
}

// Add appends a delta to its block (made with the delta's type and tool
// call when new).
func (p *Partial) Add(d agent.AssistantMessageEvent) {
	b := p.blocks[d.ContentIndex]
	if b == nil {
		b = &PartialBlock{Index: d.ContentIndex, Type: d.Type}
		p.blocks[d.ContentIndex] = b
	}
	if b.ToolCallID == "" {
		b.ToolCallID = d.ToolCallID
	}
	if b.ToolName == "" {
		b.ToolName = d.ToolName
	}
	b.text.WriteString(d.Delta)
}

// Blocks are the blocks in content order.
func (p *Partial) Blocks() []*PartialBlock {
	return slices.SortedFunc(maps.Values(p.blocks), func(a, b *PartialBlock) int { return cmp.Compare(a.Index, b.Index) })
}

// Message is the partial message: one content block per index up to the
// last (an index no delta reached is an empty text block), a tool call's
// arguments {} until their JSON is a whole object.
func (p *Partial) Message() agent.Message {
	m := agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{}}
	for _, b := range p.Blocks() {
		for len(m.Content) <= b.Index {
			m.Content = append(m.Content, agent.ContentBlock{Type: agent.BlockText})
		}
		c := &m.Content[b.Index]
		switch b.Type {
		case agent.DeltaText:
			c.Text = b.Text()
		case agent.DeltaThinking:
			c.Type, c.Text = agent.BlockThinking, b.Text()
		case agent.DeltaToolCall:
			tc := agent.ToolCall{ID: b.ToolCallID, Name: b.ToolName, Arguments: json.RawMessage("{}")}
			if raw := json.RawMessage(b.Text()); llm.IsArgumentsObject(raw) {
				tc.Arguments = raw
			}
			c.Type, c.ToolCall = agent.BlockToolCall, &tc
		}
	}
	return m
}
