package settings

import (
	"strings"
	"testing"
)

// Issue 12: the steering, follow-up and approval settings have the
// terminal agent's defaults and reject bad values in one line.
func TestSteeringAndApprovalKeys(t *testing.T) {
	d := Defaults()
	if d.Agent.SteeringMode != "one-at-a-time" || d.Agent.FollowUpMode != "one-at-a-time" ||
		len(d.Tools.RequireApproval) != 0 || d.Tools.ApprovalTimeoutMs != 30*60*1000 {
		t.Fatalf("defaults: agent %+v requireApproval %v approvalTimeoutMs %d", d.Agent, d.Tools.RequireApproval, d.Tools.ApprovalTimeoutMs)
	}
	load := func(env map[string]string) (Settings, error) {
		env["DURABLE_AGENT_HOME"] = t.TempDir()
		return loadEnv(t, env)
	}
	s, err := load(map[string]string{
		"DURABLE_AGENT_AGENT_FOLLOWUPMODE":      "all",
		"DURABLE_AGENT_TOOLS_REQUIREAPPROVAL":   "bash;write;edit",
		"DURABLE_AGENT_TOOLS_APPROVALTIMEOUTMS": "30000",
	})
	if err != nil || s.Agent.FollowUpMode != "all" || strings.Join(s.Tools.RequireApproval, ",") != "bash,write,edit" || s.Tools.ApprovalTimeoutMs != 30000 {
		t.Fatalf("load: %+v %v %d, %v", s.Agent, s.Tools.RequireApproval, s.Tools.ApprovalTimeoutMs, err)
	}
	// Issue 22: 0 is still "wait without end", on purpose.
	if s, err := load(map[string]string{"DURABLE_AGENT_TOOLS_APPROVALTIMEOUTMS": "0"}); err != nil || s.Tools.ApprovalTimeoutMs != 0 {
		t.Fatalf("approvalTimeoutMs 0: %d, %v", s.Tools.ApprovalTimeoutMs, err)
	}
	for name, tc := range map[string]struct{ key, value, want string }{
		"unknown mode":      {"DURABLE_AGENT_AGENT_STEERINGMODE", "some", "agent.steeringMode: must be one of one-at-a-time, all"},
		"unknown tool":      {"DURABLE_AGENT_TOOLS_REQUIREAPPROVAL", "bash;rm", "tools.requireApproval[1]: is not a tool"},
		"negative timeout":  {"DURABLE_AGENT_TOOLS_APPROVALTIMEOUTMS", "-1", "tools.approvalTimeoutMs"},
		"timeout past week": {"DURABLE_AGENT_TOOLS_APPROVALTIMEOUTMS", "604800001", "tools.approvalTimeoutMs"},
	} {
		_, err := load(map[string]string{tc.key: tc.value})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", name, err, tc.want)
		}
	}
}
