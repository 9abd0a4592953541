package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/workflows"
)

// described is a schedule as Describe gives it to an update: every 2 s,
// overlap skip, catch-up 1 h, fresh sessions "job", its input a payload.
func described(t *testing.T) (*client.Schedule, *commonpb.Memo) {
	t.Helper()
	dc := converter.GetDefaultDataConverter()
	p, err := dc.ToPayload(workflows.ScheduledPromptInput{ScheduleID: "n", SessionPrefix: "job", Prompt: prompt()})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := dc.ToPayload("every 2s")
	return &client.Schedule{
		Spec:   &client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: 2 * time.Second}}},
		Policy: &client.SchedulePolicies{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, CatchupWindow: time.Hour},
		Action: &client.ScheduleWorkflowAction{Workflow: workflows.ScheduledPromptWorkflowName, Args: []any{p}},
	}, &commonpb.Memo{Fields: map[string]*commonpb.Payload{MemoWhen: w}}
}

// An update changes the fields it names and says what changed; the rest
// of the schedule stays as it was.
func TestApplyChange(t *testing.T) {
	on, off := true, false
	for _, tc := range []struct {
		name    string
		change  Change
		changed []string
		check   func(*testing.T, *client.Schedule, workflows.ScheduledPromptInput)
	}{
		{"cron", Change{Cron: "0 4 * * *"}, []string{`when: every 2s -> cron "0 4 * * *"`},
			func(t *testing.T, s *client.Schedule, _ workflows.ScheduledPromptInput) {
				if got := s.Spec.CronExpressions; len(got) != 1 || got[0] != `0 4 * * * #cron "0 4 * * *"` || len(s.Spec.Intervals) != 0 {
					t.Errorf("spec %+v", s.Spec)
				}
			}},
		{"every", Change{Every: 5 * time.Second}, []string{"when: every 2s -> every 5s"},
			func(t *testing.T, s *client.Schedule, _ workflows.ScheduledPromptInput) {
				if s.Spec.Intervals[0].Every != 5*time.Second {
					t.Errorf("spec %+v", s.Spec)
				}
			}},
		{"same every", Change{Every: 2 * time.Second}, nil, nil},
		{"policies", Change{Overlap: "allow-all", CatchupWindow: 2 * time.Hour},
			[]string{"overlap: skip -> allow-all", "catch-up window: 1h0m0s -> 2h0m0s"},
			func(t *testing.T, s *client.Schedule, _ workflows.ScheduledPromptInput) {
				if s.Policy.Overlap != enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL || s.Policy.CatchupWindow != 2*time.Hour {
					t.Errorf("policy %+v", s.Policy)
				}
			}},
		{"prompt and worktree", Change{Message: "fix the tests", Worktree: &on},
			[]string{`prompt: "fix the tests"`, "worktree: off -> on"},
			func(t *testing.T, _ *client.Schedule, in workflows.ScheduledPromptInput) {
				if in.Prompt.Message != "fix the tests" || in.Prompt.Worktree != activities.WorktreeRequired || in.SessionPrefix != "job" ||
					in.Prompt.Model.Name != "scripted-1" {
					t.Errorf("input %+v", in)
				}
			}},
		{"worktree already off", Change{Worktree: &off}, nil, nil},
		{"one session", Change{SessionID: "nightly"}, []string{"session: fresh sessions job-<scheduled time> -> session nightly"},
			func(t *testing.T, _ *client.Schedule, in workflows.ScheduledPromptInput) {
				if in.SessionID != "nightly" || in.SessionPrefix != "" {
					t.Errorf("input %+v", in)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, memo := described(t)
			before := s.Action.(*client.ScheduleWorkflowAction).Args[0]
			m := &Manager{}
			got, err := m.apply(tc.change, s, memo)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.changed, "\n") {
				t.Fatalf("changed %q, want %q", got, tc.changed)
			}
			arg := s.Action.(*client.ScheduleWorkflowAction).Args[0]
			in, ok := arg.(workflows.ScheduledPromptInput)
			if !ok {
				if arg != before {
					t.Fatalf("input rewritten as %T without a change", arg)
				}
				in, _ = m.decodeInput(arg)
			}
			if tc.check != nil {
				tc.check(t, s, in)
			}
		})
	}
}

// A bad change is refused by the check or by the input's own rules, and
// a schedule edited into another workflow is not touched.
func TestApplyChangeRefuses(t *testing.T) {
	s, memo := described(t)
	m := &Manager{}
	ch := Change{Worktree: new(bool), Check: func(workflows.ScheduledPromptInput) error { t.Fatal("check without a change"); return nil }}
	if _, err := m.apply(ch, s, memo); err != nil {
		t.Fatal(err)
	}
	on := true
	ch = Change{Worktree: &on, Check: func(in workflows.ScheduledPromptInput) error {
		return errors.New("workspace /tmp/x is not in a git repository")
	}}
	if _, err := m.apply(ch, s, memo); err == nil || err.Error() != "workspace /tmp/x is not in a git repository" {
		t.Fatalf("check: %v", err)
	}
	s.Action.(*client.ScheduleWorkflowAction).Workflow = "SomethingElse"
	if _, err := m.apply(Change{Every: time.Minute}, s, memo); err == nil || !strings.Contains(err.Error(), "does not start a scheduled prompt") {
		t.Fatalf("other workflow: %v", err)
	}
}

func TestChangeValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		c    Change
		want string
	}{
		"no id":        {Change{Every: time.Hour}, "missing --id"},
		"nothing":      {Change{ID: "n"}, "nothing to change"},
		"both":         {Change{ID: "n", Cron: "@daily", Every: time.Hour}, "not both"},
		"short every":  {Change{ID: "n", Every: time.Millisecond}, "invalid --every 1ms"},
		"bad overlap":  {Change{ID: "n", Overlap: "cancel"}, "invalid overlap policy"},
		"short window": {Change{ID: "n", CatchupWindow: time.Second}, "invalid --catchup 1s"},
		"two sessions": {Change{ID: "n", SessionID: "a", SessionPrefix: "b"}, "not both"},
	} {
		err := tc.c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", name, err, tc.want)
		}
	}
}

// The words of a schedule's spec: a cron expression's own comment first
// (an update cannot change the memo), the memo while it still fits the
// spec, else the spec.
func TestWhen(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	memo := func(w string) *commonpb.Memo {
		p, _ := dc.ToPayload(w)
		return &commonpb.Memo{Fields: map[string]*commonpb.Payload{MemoWhen: p}}
	}
	every := func(d time.Duration) *client.ScheduleSpec {
		return &client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: d}}}
	}
	cal := func(comment string) *client.ScheduleSpec {
		return &client.ScheduleSpec{Calendars: []client.ScheduleCalendarSpec{{Comment: comment}}}
	}
	m := &Manager{}
	for _, tc := range []struct {
		name string
		memo *commonpb.Memo
		spec *client.ScheduleSpec
		want string
	}{
		{"created every", memo("every 2s"), every(2 * time.Second), "every 2s"},
		{"created @every", memo(`cron "@every 90m"`), every(90 * time.Minute), `cron "@every 90m"`},
		{"every updated", memo("every 2s"), every(5 * time.Second), "every 5s"},
		{"cron updated to every", memo(`cron "0 3 * * *"`), every(time.Hour), "every 1h0m0s"},
		{"cron as created", memo(`cron "0 3 * * *"`), cal(`cron "0 3 * * *"`), `cron "0 3 * * *"`},
		{"cron updated", memo(`cron "0 3 * * *"`), cal(`cron "0 4 * * *"`), `cron "0 4 * * *"`},
		{"every updated to cron", memo("every 2s"), cal(`cron "@daily"`), `cron "@daily"`},
		{"cron without comment", memo(`cron "0 3 * * * # nightly"`), cal("nightly"), `cron "0 3 * * * # nightly"`},
	} {
		if got := m.when(tc.memo, tc.spec); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if s := specOf("0 3 * * * # nightly", 0); s.CronExpressions[0] != "0 3 * * * # nightly" {
		t.Errorf("an expression with a comment of its own got %q", s.CronExpressions[0])
	}
}
