package prices

import (
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// Issue 39: the known models of both providers have a price, with their
// cache prices, and the table says where it came from and when.
func TestKnown(t *testing.T) {
	k := Known()
	if k.Source == "" || len(k.Date) != len("2006-01-02") || len(k.Models) < 20 {
		t.Fatalf("table source %q date %q, %d models", k.Source, k.Date, len(k.Models))
	}
	if c, ok := Of("anthropic", "claude-sonnet-4-5"); !ok || c != (agent.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}) {
		t.Fatalf("claude-sonnet-4-5 costs %+v (%v)", c, ok)
	}
	if c, ok := Of("openai", "gpt-4o"); !ok || c.Input <= 0 || c.Output <= c.Input || c.CacheRead <= 0 {
		t.Fatalf("gpt-4o costs %+v (%v)", c, ok)
	}
	if _, ok := Of("openai", "my-local-model"); ok {
		t.Fatal("an unknown model has a price")
	}
	for id, v := range k.Models {
		if v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0 {
			t.Fatalf("%s has a negative price %v", id, v)
		}
	}
}
