package activities

import (
	"testing"

	"github.com/durableagent/durableagent/internal/llm/scripted"
)

// BeginPrompt keeps a prompt's fault scripts beside the session once;
// CallModel plays the kept script when its input names it (FaultsAt)
// and carries none, counting the calls from the prompt's user message;
// deleting the session removes the kept script.
func TestBeginPrompt_KeepsTheFaultScriptForTheModelCalls(t *testing.T) {
	f := newFixture(t, scripted.New(scripted.Options{}))
	f.env.RegisterActivityWithOptions(f.acts.BeginPrompt, activityName(BeginPromptName))
	begin := BeginPromptInput{SessionID: "s1", UserEntryID: "u2", Message: "next prompt",
		Faults: []string{"503 first", "503 second"}, SummaryFaults: []string{"529 summary"}}
	if _, err := f.env.ExecuteActivity(BeginPromptName, begin); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"503 first", "503 second", ""} {
		in := CallModelInput{SessionID: "s1", LeafID: "u2", EntryID: "a" + string(rune('1'+i)),
			Model: ModelRef{Provider: "scripted", Name: "scripted-1"}, PromptEntryID: "u2", FaultsAt: "u2"}
		res, err := f.call(t, in)
		if err != nil || res.ErrorMessage != want {
			t.Fatalf("call %d: %+v, %v; want error %q from the kept script", i+1, res, err, want)
		}
	}
	kept, err := f.store.Aside("s1", "u2")
	if err != nil || kept == nil {
		t.Fatalf("kept script %q, %v", kept, err)
	}
	if _, err := deleteSession(t, f.store, DeleteSessionInput{SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if kept, err := f.store.Aside("s1", "u2"); err != nil || kept != nil {
		t.Fatalf("after DeleteSession the kept script is %q, %v; want none", kept, err)
	}
}
