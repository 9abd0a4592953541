package scripted

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// A usage: element makes the stream report usage as a provider's does:
// the input and cache counts before the first piece of the answer, the
// whole usage after the last; the answer's usage is the script's.
func TestComplete_UsageElementReportsUsageMidStream(t *testing.T) {
	tests := []struct {
		name, elem string
		want       agent.Usage
		stop       agent.StopReason
	}{
		{"text", `usage:{"input":1200,"cacheRead":800,"cacheWrite":50,"output":40} text:All tests pass now.`,
			agent.Usage{Input: 1200, CacheRead: 800, CacheWrite: 50, Output: 40}, agent.StopReasonStop},
		{"tool", `usage:{"input":7,"output":3} tool:bash {"command":"ls"}`,
			agent.Usage{Input: 7, Output: 3}, agent.StopReasonToolUse},
		{"ok", `USAGE: {"cacheRead": 9, "output": 2}   ok`,
			agent.Usage{CacheRead: 9, Output: 2}, agent.StopReasonStop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			m := New(Options{StreamDelay: time.Microsecond}).Complete(context.Background(),
				llm.Request{Messages: userMsgs("go"), Faults: []string{tt.elem}, OnDelta: rec.add})
			if m.StopReason != tt.stop || m.Usage == nil || *m.Usage != tt.want {
				t.Fatalf("answer stop %q usage %+v, want %q %+v", m.StopReason, m.Usage, tt.stop, tt.want)
			}
			n := len(rec.deltas)
			if n < 3 {
				t.Fatalf("%d deltas, want a usage report, the answer's pieces and a usage report", n)
			}
			first, last := rec.deltas[0], rec.deltas[n-1]
			wantFirst := agent.Usage{Input: tt.want.Input, CacheRead: tt.want.CacheRead, CacheWrite: tt.want.CacheWrite}
			if first.Type != "" || first.Usage == nil || *first.Usage != wantFirst {
				t.Errorf("first delta %+v (usage %+v), want a report of input and cache %+v", first, first.Usage, wantFirst)
			}
			if last.Type != "" || last.Usage == nil || *last.Usage != tt.want {
				t.Errorf("last delta %+v (usage %+v), want the whole usage %+v", last, last.Usage, tt.want)
			}
			rec.deltas = rec.deltas[1 : n-1]
			for _, d := range rec.deltas {
				if d.Usage != nil {
					t.Fatalf("an answer piece carries usage: %+v", d)
				}
			}
			checkDeltas(t, &rec, m)
		})
	}
}

// A usage: element without output keeps the estimated output count.
func TestComplete_UsageWithoutOutputEstimatesIt(t *testing.T) {
	m := New(Options{}).Complete(context.Background(),
		llm.Request{Messages: userMsgs("go"), Faults: []string{`usage:{"input":100} text:twelve chars`}})
	if m.Usage == nil || m.Usage.Input != 100 || m.Usage.Output != 3 {
		t.Fatalf("usage %+v, want input 100 and output 3 (12 characters / 4)", m.Usage)
	}
}

// Without a usage: element nothing reports usage: existing scripts
// stream exactly as before (checkDeltas rejects a delta with no type).
func TestComplete_NoUsageElementReportsNoUsage(t *testing.T) {
	for _, elem := range []string{"ok", "text:done.", `tool:bash {"command":"ls"}`} {
		var rec recorder
		m := New(Options{}).Complete(context.Background(),
			llm.Request{Messages: userMsgs("go"), Faults: []string{elem}, OnDelta: rec.add})
		checkDeltas(t, &rec, m)
		for _, d := range rec.deltas {
			if d.Usage != nil {
				t.Fatalf("%s: delta %+v reports usage", elem, d)
			}
		}
	}
}

func TestParseFault_UsageElement(t *testing.T) {
	f, err := ParseFault(`usage:{"input":1,"output":2} hang:1ms`)
	if err != nil || f.Kind != "hang" || f.Hang != time.Millisecond || f.Usage == nil || *f.Usage != (agent.Usage{Input: 1, Output: 2}) {
		t.Fatalf("ParseFault = %+v, %v", f, err)
	}
	bad := []struct{ elem, want string }{
		{`usage:`, "not a JSON object"},
		{`usage:{"input":1`, "not a JSON object"},
		{`usage:[1,2] ok`, "not a JSON object"},
		{`usage:{"inputs":1} ok`, "not a JSON object"},
		{`usage:{"input":"many"} ok`, "not a JSON object"},
		{`usage:{"input":-1} ok`, "negative token count"},
		{`usage:{} ok`, "reports no tokens"},
		{`usage:{"input":1} usage:{"input":2} ok`, "usage given twice"},
		{`usage:{"input":1} 503 Service Unavailable`, "applies to an answer"},
		{`usage:{"input":1} overflow`, "applies to an answer"},
		{`usage:{"input":1} hang`, "applies to an answer"},
		{`usage:{"input":1} tool:bash [1]`, "not a JSON object: [1]"},
	}
	for _, b := range bad {
		_, err := ParseFault(b.elem)
		if err == nil || !strings.Contains(err.Error(), b.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseFault(%q) = %v, want a one-line error with %q", b.elem, err, b.want)
		}
	}
}
