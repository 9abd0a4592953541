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

// A cron expression the server would refuse is refused here, in one line
// naming the field; the forms the server accepts pass.
func TestValidateCron(t *testing.T) {
	for _, ok := range []string{"0 3 * * *", "*/15 9-17 * * MON-FRI", "0 0 1,15 JAN *", "@daily", "@every 90m",
		"CRON_TZ=Europe/Berlin 0 3 * * *", "0 0 3 * * * 2027", "0 12 L * ?"} {
		if err := ValidateCron(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for expr, want := range map[string]string{
		"0 3 * *":                        "4 fields, want 5",
		"61 3 * * *":                     `minute field "61": "61" is not in 0-59`,
		"0 24 * * *":                     "hour field",
		"0 3 0 * *":                      "day of month field",
		"0 3 * 13 *":                     "month field",
		"0 3 * * FUNDAY":                 "day of week field",
		"*/0 * * * *":                    `step "0" is not a positive number`,
		"@sometimes":                     "unknown macro",
		"@every soon":                    "@every wants a duration",
		"CRON_TZ=Mars/Olympus 0 3 * * *": `unknown time zone "Mars/Olympus"`,
		"":                               "0 fields",
	} {
		err := ValidateCron(expr)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", expr, err, want)
		}
	}
}

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
		"bad cron":        {func(s *Spec) { s.Cron = "0 25 * * *" }, "hour field"},
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
