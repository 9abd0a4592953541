package openai

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/durableagent/durableagent/agent"
)

// FieldReasoningContent is the delta field DeepSeek (and vLLM, llama.cpp,
// Qwen) stream reasoning in. A thinking block that came in it carries the
// name as its signature and goes back as the reasoning_content of an
// assistant message with tool calls: DeepSeek's thinking mode answers 400
// "Missing reasoning_content field" otherwise. Reasoning that came in the
// "reasoning" field (OpenRouter, Ollama, Groq) is not sent back: Groq
// rejects unknown message fields, and OpenRouter takes reasoning_details.
const FieldReasoningContent = "reasoning_content"

// reasoningContent is the thinking of an assistant message to send back as
// reasoning_content ("" when it did not come in that field).
func reasoningContent(m agent.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == agent.BlockThinking && c.Signature == FieldReasoningContent {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// part is one typed part of a content array.
type part struct {
	thinking bool
	text     string
}

// contentParts reads a delta's content sent as an array of typed parts
// (Mistral's Magistral models): {"type":"text","text":...} and
// {"type":"thinking","thinking":[{"type":"text","text":...}]}. Parts of
// other types (images, references) carry no text and are skipped.
func contentParts(raw string) []part {
	var parts []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if json.Unmarshal([]byte(raw), &parts) != nil {
		return nil
	}
	var out []part
	for _, p := range parts {
		switch p.Type {
		case "text":
			out = append(out, part{text: p.Text})
		case "thinking":
			var inner []struct {
				Text string `json:"text"`
			}
			var s string
			switch {
			case json.Unmarshal(p.Thinking, &inner) == nil:
				for _, t := range inner {
					out = append(out, part{thinking: true, text: t.Text})
				}
			case json.Unmarshal(p.Thinking, &s) == nil:
				out = append(out, part{thinking: true, text: s})
			}
		}
	}
	return out
}

// reasoningDetails merges the reasoning_details entries a router streams
// (OpenRouter: each chunk carries pieces of entries keyed by "index"): the
// text-like fields of one entry are joined, the others keep their first
// non-null value. The merged array goes back with the message
// (agent.Message.ReasoningDetails) so the upstream model can continue.
type reasoningDetails struct {
	entries []map[string]any
	byIndex map[float64]int
}

// joined are the fields whose pieces are concatenated.
var joined = map[string]bool{"text": true, "summary": true, "data": true, "signature": true}

func (r *reasoningDetails) add(raw string) {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "null" {
		return
	}
	var list []map[string]any
	if json.Unmarshal([]byte(raw), &list) != nil {
		return
	}
	for _, e := range list {
		idx, ok := e["index"].(float64)
		if !ok {
			idx = float64(len(r.entries)) + 1e6 // no index: an entry of its own
		}
		if r.byIndex == nil {
			r.byIndex = map[float64]int{}
		}
		i, seen := r.byIndex[idx]
		if !seen {
			r.byIndex[idx] = len(r.entries)
			r.entries = append(r.entries, e)
			continue
		}
		into := r.entries[i]
		for k, v := range e {
			s, isString := v.(string)
			old, hadString := into[k].(string)
			switch {
			case joined[k] && isString && hadString:
				into[k] = old + s
			case into[k] == nil:
				into[k] = v
			}
		}
	}
}

// JSON is the merged array (nil when none came).
func (r *reasoningDetails) JSON() json.RawMessage {
	if len(r.entries) == 0 {
		return nil
	}
	b, err := json.Marshal(r.entries)
	if err != nil {
		return nil
	}
	return b
}

// lengthThenError reports whether err is an error chunk that came after
// the answer already finished with finish_reason "length" (OpenRouter
// sends {"error":{"code":400,"message":"Token limit reached"}} then). Such
// an answer is a length stop with what was streamed before the error
// chunk: the chunk itself is an error report, and its usage is not read
// (the team's replay of recorded provider traffic, docs/providers.md, reads
// none from it).
func (a *assembler) lengthThenError(err error) bool {
	var streamErr *ssestream.StreamError
	return a.finish == "length" && errors.As(err, &streamErr)
}
