package workflows

import (
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
)

// A prompt's images are written with the user message and reach the
// model (the scripted model names their types in its reply); the user
// message_end carries them too.
func TestPrompt_ImagesReachTheModel(t *testing.T) {
	h := newHarness(t)
	echo := scripted.New(scripted.Options{}) // replies "Scripted reply to: <text> [<image types>]"
	h.acts.Provider = func(string) (llm.Provider, error) { return echo, nil }
	in := input()
	in.Message = "what is this"
	in.Images = []agent.ContentBlock{{Type: agent.BlockImage, Data: "iVBORw0KGgo=", MimeType: "image/png"}}
	res, err := h.run(in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Scripted reply to: what is this [image/png]" {
		t.Fatalf("answer %q: the image did not reach the model", res.Text)
	}
	sess, err := h.store.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	user := sess.Context(sess.LeafID())[0]
	if imgs := user.Images(); user.Text() != "what is this" || len(imgs) != 1 || imgs[0].Data != "iVBORw0KGgo=" {
		t.Fatalf("stored user message = %+v", user)
	}
	for _, e := range h.events() {
		if e.Type == agent.EventMessageEnd && e.Message.Role == agent.RoleUser {
			if len(e.Message.Images()) != 1 {
				t.Fatalf("user message_end = %+v", e.Message)
			}
			return
		}
	}
	t.Fatal("no user message_end")
}

// Bad images are refused before the workflow runs, in one line.
func TestPromptInput_ChecksImages(t *testing.T) {
	for _, tc := range []struct {
		name string
		img  agent.ContentBlock
		want string
	}{
		{"not an image", agent.ContentBlock{Type: agent.BlockText, Text: "x"}, `images[0] has type "text", want "image"`},
		{"not an image type", agent.ContentBlock{Type: agent.BlockImage, Data: "AA==", MimeType: "text/plain"}, `images[0] has mimeType "text/plain"`},
		{"no data", agent.ContentBlock{Type: agent.BlockImage, MimeType: "image/png"}, "images[0] has no data"},
		{"not base64", agent.ContentBlock{Type: agent.BlockImage, Data: "%%%", MimeType: "image/png"}, "images[0] data is not base64"},
		{"too big", agent.ContentBlock{Type: agent.BlockImage, Data: strings.Repeat("AAAA", MaxImageBytes/4+1), MimeType: "image/png"}, "at most 1048576"},
	} {
		in := input()
		in.Images = []agent.ContentBlock{tc.img}
		err := in.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
