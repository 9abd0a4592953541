package workflows

import (
	"path/filepath"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/auth"
)

// fileCreds adapts the persistent auth store to activities.Credentials and
// activities.ModelFallback, as internal/app does for the worker (the
// workflows package cannot import internal/app, which imports it).
// SPEC 3 step 7 (model fallback): a usage limit on the only credential,
// with retry.fallbackModels ["scripted-2"], switches the session to the
// fallback model; the switch succeeded, so the retry waits 0 ms, and the
// next model call (and the session state) runs on "scripted-2". Without a
// fallback model the same error waits the normal delay on the same model.
func TestPrompt_UsageLimitFallsBackToNextModel(t *testing.T) {
	const limit = "usage limit reached for this account; retry-after-ms=60000"
	cases := []struct {
		name      string
		fallback  []string
		wantStart string
		wantModel string // of the second model call
	}{
		{name: "fallback model", fallback: []string{"scripted-2"},
			wantStart: `{"attempt":1,"delayMs":0,"errorMessage":"` + limit + `","maxAttempts":3,"type":"auto_retry_start"}`,
			wantModel: "scripted-2"},
		{name: "no fallback model",
			wantStart: `{"attempt":1,"delayMs":2000,"errorMessage":"` + limit + `","maxAttempts":3,"type":"auto_retry_start"}`,
			wantModel: "scripted-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			f, err := auth.OpenFile(filepath.Join(t.TempDir(), auth.FileName), auth.FileOptions{
				Env:            func(string) (string, bool) { return "", false },
				FallbackModels: map[string][]string{"scripted": tc.fallback},
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Add(auth.Credential{ID: "only", Provider: "scripted", Secret: "sk-onlyonlyonly"}); err != nil {
				t.Fatal(err)
			}
			h.acts.Credentials = f

			res, err := h.run(input(limit))
			if err != nil || res.Status != agent.StatusCompleted {
				t.Fatalf("prompt: %+v %v", res, err)
			}
			got := retryEvents(t, h.events())
			wantEnd := `{"attempt":1,"success":true,"type":"auto_retry_end"}`
			if len(got) != 2 || got[0] != tc.wantStart || got[1] != wantEnd {
				t.Fatalf("retry events %v\nwant [%s %s]", got, tc.wantStart, wantEnd)
			}
			if len(h.calls) != 2 || h.calls[0].Model.Name != "scripted-1" || h.calls[1].Model.Name != tc.wantModel {
				t.Fatalf("model calls %+v, want scripted-1 then %s", h.calls, tc.wantModel)
			}
			if st := h.state(); st.Model != tc.wantModel {
				t.Fatalf("state model %q after the retry, want %q", st.Model, tc.wantModel)
			}
			entries, err := f.List()
			if err != nil || len(entries) != 1 || entries[0].BlockedUntil.IsZero() {
				t.Fatalf("auth store %+v %v: want the only credential blocked", entries, err)
			}
		})
	}
}
