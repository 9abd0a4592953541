package schedule

import (
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/retry"
	"github.com/durableagent/durableagent/workflows"
)

func prompt() workflows.PromptInput {
	return workflows.PromptInput{Message: "update the dependencies",
		Model: activities.ModelRef{Provider: "scripted", Name: "scripted-1", ContextWindow: 200000}, Retry: retry.DefaultSettings()}
}

// A spec is checked whole before anything is created.
func TestSpecValidate(t *testing.T) {
	good := Spec{ID: "nightly", Cron: "0 3 * * *", SessionPrefix: "nightly", Prompt: prompt()}
	if err := good.Validate(); err != nil {
		t.Fatalf("good spec refused: %v", err)
	}
	for name, tc := range map[string]struct {
		edit func(*Spec)
		want string
	}{
		"no id":           {func(s *Spec) { s.ID = "" }, "missing --id"},
		"bad id":          {func(s *Spec) { s.ID = "a/b" }, "invalid schedule id"},
		"cron and every":  {func(s *Spec) { s.Every = time.Hour }, "give --cron or --every"},
		"neither":         {func(s *Spec) { s.Cron = "" }, "give --cron or --every"},
		"every too short": {func(s *Spec) { s.Cron, s.Every = "", time.Millisecond }, "invalid --every 1ms"},
		"bad overlap":     {func(s *Spec) { s.Overlap = "cancel" }, `invalid overlap policy "cancel"`},
		"short catchup":   {func(s *Spec) { s.CatchupWindow = time.Second }, "invalid --catchup 1s"},
		"two sessions":    {func(s *Spec) { s.SessionID = "s1" }, "not both"},
		"no message":      {func(s *Spec) { s.Prompt.Message = "" }, "message"},
	} {
		s := good
		tc.edit(&s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", name, err, tc.want)
		}
	}
}

func TestOverlapNames(t *testing.T) {
	for name, p := range map[string]enumspb.ScheduleOverlapPolicy{"skip": enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		"buffer-one": enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE, "allow-all": enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL} {
		got, err := ParseOverlap(name)
		if err != nil || got != p || OverlapName(p) != name {
			t.Errorf("%s: parsed %v %v, named %q", name, got, err, OverlapName(p))
		}
	}
	if OverlapName(enumspb.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER) != "cancel-other" {
		t.Errorf("a policy set elsewhere is named %q", OverlapName(enumspb.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER))
	}
}
