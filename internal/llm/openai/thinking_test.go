package openai

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// The thinking level becomes reasoning_effort; off sends none, max the
// largest effort.
func TestComplete_ThinkingLevelSetsReasoningEffort(t *testing.T) {
	for _, tc := range []struct{ level, want string }{
		{"", ""}, {llm.ThinkingOff, ""}, {llm.ThinkingMinimal, "minimal"}, {llm.ThinkingHigh, "high"}, {llm.ThinkingXHigh, "xhigh"},
		{llm.ThinkingMax, "xhigh"}, // issue 24: the largest effort the API takes
	} {
		t.Run(tc.level, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				stream(w, chunkHel, chunkLo, chunkUse, chunkDone)
			})
			req := request()
			req.ThinkingLevel = tc.level
			call(t, s, req)
			raw, ok := bodyField(t, s.bodies[0], "reasoning_effort")
			switch {
			case tc.want == "" && ok:
				t.Fatalf("reasoning_effort %s sent for level %q", raw, tc.level)
			case tc.want != "" && string(raw) != `"`+tc.want+`"`:
				t.Fatalf("reasoning_effort = %s, want %q", raw, tc.want)
			}
		})
	}
}

// Images of a user message go as image_url content parts (data URLs)
// after the text; a bash execution the user ran (as llm.SendableMessages
// passes it on) goes as the user message the terminal agent sends.
func TestComplete_SendsImagesAndBashExecutions(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w, chunkHel, chunkLo, chunkUse, chunkDone)
	})
	req := request()
	req.Messages = llm.SendableMessages([]agent.Message{
		{Role: agent.RoleBashExecution, Command: "ls", Output: "a.txt"},
		{Role: agent.RoleUser, Content: []agent.ContentBlock{{Type: agent.BlockText, Text: "see"}, {Type: agent.BlockImage, Data: "R0lGOD==", MimeType: "image/gif"}}},
	})
	call(t, s, req)
	raw, _ := bodyField(t, s.bodies[0], "messages")
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		t.Fatal(err)
	}
	// system, the bash execution, the user message
	if len(msgs) != 3 || !jsonEqual(t, msgs[1], `{"role":"user","content":"Ran `+"`ls`"+`\n`+"```"+`\na.txt\n`+"```"+`"}`) {
		t.Fatalf("messages = %s", raw)
	}
	if !jsonEqual(t, msgs[2], `{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/gif;base64,R0lGOD=="}}]}`) {
		t.Fatalf("user message with image = %s", msgs[2])
	}
}
