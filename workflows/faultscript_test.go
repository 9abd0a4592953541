package workflows

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// History per model call stays flat however long the scripted model's
// fault script is: BeginPrompt keeps the script beside the session once
// per prompt, and each CallModel input names it (FaultsAt) rather than
// carry it, while the script still plays call by call.
func TestPrompt_ModelCallInputsStayFlatWithALongFaultScript(t *testing.T) {
	const calls = 200
	script := make([]string, 0, calls+1)
	for i := 0; i < calls; i++ {
		script = append(script, fmt.Sprintf(`tool:ls {"path":"dir%03d"}`, i))
	}
	script = append(script, "text:all listed")
	h := newHarness(t)
	res, err := h.run(h.toolInput(script...))
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt %+v, %v; want completed", res, err)
	}
	if len(h.calls) != calls+1 || len(h.tools) != calls {
		t.Fatalf("%d model calls and %d tool calls, want %d and %d: the script did not play", len(h.calls), len(h.tools), calls+1, calls)
	}
	if res.Text != "all listed" {
		t.Fatalf("last answer %q, want the script's last element", res.Text)
	}
	const bound = 1024 // bytes; the script alone is about 6 KiB
	for i, in := range h.calls {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > bound {
			t.Fatalf("CallModel input %d is %d bytes (over %d): it carries the fault script", i+1, len(b), bound)
		}
	}
}

// A prompt that continues as new hands its next run no fault script
// (the script is kept beside the session, FaultsAt says where), and the
// script goes on playing in the next run from where it was.
func TestPrompt_ContinuedRunCarriesNoFaultScript(t *testing.T) {
	h := newHarness(t)
	in := h.toolInput(`tool:ls {}`, `tool:ls {}`, `tool:ls {}`, `text:played in the next run`)
	in.Model.SummaryFaults = []string{"503 Service Unavailable"}
	in.Agent.ContinueAsNewEvents = 20
	h.env.SetCurrentHistoryLength(25)
	next := h.continued(in)
	if next.Model.Faults != nil || next.Model.SummaryFaults != nil || next.Continued.FaultsAt == "" {
		t.Fatalf("next run's model %+v, carried FaultsAt %q; want no script, and where it is kept", next.Model, next.Continued.FaultsAt)
	}
	h2 := newHarness(t)
	h2.store, h2.acts.Sessions = h.store, h.store
	h2.workspace = h.workspace
	res, err := h2.run(next)
	if err != nil || res.Text != "played in the next run" {
		t.Fatalf("continued run: %+v %v; want the script's last element", res, err)
	}
	if n := len(h.calls) + len(h2.calls); n != 4 {
		t.Fatalf("%d model calls over both runs, want 4", n)
	}
	for _, c := range append(h.calls, h2.calls...) {
		if c.Model.Faults != nil || c.FaultsAt != next.Continued.FaultsAt {
			t.Fatalf("CallModel input %+v; want no script and FaultsAt %q", c, next.Continued.FaultsAt)
		}
	}
}
