package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

// usage_update has its own JSON shape (only its fields), decodes back,
// and reads "$0.42 of $5.00" for people.
func TestUsageEvent_ShapeAndLine(t *testing.T) {
	var s Spend
	s.Add(&Usage{Input: 300, Output: 120, CacheRead: 50, Cost: UsageCost{Total: 0.25}})
	s.Add(nil)
	s.Add(&Usage{Input: 30, Output: 20, Cost: UsageCost{Total: 0.17}})
	e := Event{Type: EventUsage, Seq: 7, Usage: &s, Budget: &Budget{Limits: BudgetLimits{MaxCostUsd: 5, MaxTokens: 1000}}}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"usage_update","seq":7,"time":"0001-01-01T00:00:00Z","usage":{"input":330,"output":140,"cacheRead":50,"cacheWrite":0,"costUsd":0.42,"unmetered":1},"budget":{"limits":{"maxCostUsd":5,"maxTokens":1000}}}`
	if string(b) != want {
		t.Fatalf("json\n%s\nwant\n%s", b, want)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil || back.Usage == nil || *back.Usage != s || back.Budget.Limits.MaxTokens != 1000 {
		t.Fatalf("decoded %+v %v", back, err)
	}
	if got := e.String(); got != "usage: 470 tokens of 1000, $0.42 of $5.00" {
		t.Fatalf("line %q", got)
	}
	s.Unpriced = true
	if got := e.String(); !strings.Contains(got, "no price for this model") {
		t.Fatalf("unpriced line %q", got)
	}
}

func TestFormatUsd(t *testing.T) {
	for v, want := range map[float64]string{0: "0.00", 5: "5.00", 5.03: "5.03", 0.5: "0.50", 5.0312: "5.0312", 0.00000123: "0.000001"} {
		if got := FormatUsd(v); got != want {
			t.Errorf("FormatUsd(%v) = %q, want %q", v, got, want)
		}
	}
}
