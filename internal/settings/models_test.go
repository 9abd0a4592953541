package settings

import (
	"reflect"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// model.available and model.prices: good values load and answer
// AvailableModels / Price; bad ones are refused with one line naming the
// item.
func TestModelKeys(t *testing.T) {
	env := newEnv(t, nil)
	s, err := load(t, "", env, "--model.provider", "anthropic", "--model.name", "claude-a",
		"--model.available", "openai/gpt-x;anthropic/claude-a;openai/or/deep", "--model.thinkingLevel", "high",
		"--model.prices", "anthropic/claude-a=3,15,0.3,3.75;openai/gpt-x=1.25,10")
	if err != nil {
		t.Fatal(err)
	}
	want := []ModelID{{"anthropic", "claude-a"}, {"openai", "gpt-x"}, {"openai", "or/deep"}}
	if got := s.Model.AvailableModels(); !reflect.DeepEqual(got, want) {
		t.Fatalf("available = %v, want %v", got, want)
	}
	if c, ok := s.Model.Price(ModelID{"openai", "gpt-x"}); !ok || c != (agent.ModelCost{Input: 1.25, Output: 10}) {
		t.Fatalf("price = %+v, %t", c, ok)
	}
	if c, ok := s.Model.Price(ModelID{"openai", "or/deep"}); ok || c != (agent.ModelCost{}) {
		t.Fatalf("unlisted price = %+v, %t", c, ok)
	}
	// Issue 39: a known model is priced without model.prices (before:
	// $0), and model.prices overrides the table.
	if c, ok := s.Model.Price(ModelID{"anthropic", "claude-sonnet-4-5"}); !ok || c != (agent.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}) {
		t.Fatalf("known model's price = %+v, %t", c, ok)
	}
	over, err := load(t, "", env, "--model.prices", "anthropic/claude-sonnet-4-5=1,2")
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := over.Model.Price(ModelID{"anthropic", "claude-sonnet-4-5"}); !ok || c != (agent.ModelCost{Input: 1, Output: 2}) {
		t.Fatalf("overridden price = %+v, %t", c, ok)
	}
	if s.Model.ThinkingLevel != "high" || Defaults().Model.ThinkingLevel != "off" {
		t.Fatalf("thinking level %q, default %q", s.Model.ThinkingLevel, Defaults().Model.ThinkingLevel)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model.available", "gpt-x"}, `model.available[0]: must be provider/name, got "gpt-x"`},
		{[]string{"--model.available", "google/gemini"}, `model.available[0]: provider "google" must be one of`},
		{[]string{"--model.available", "openai/a;openai/a"}, `model.available[1]: is listed twice`},
		{[]string{"--model.prices", "openai/a"}, `model.prices[0]: must be provider/name=input,output[,cacheRead[,cacheWrite]]`},
		{[]string{"--model.prices", "openai/a=1"}, `must give 2 to 4 prices (input,output[,cacheRead[,cacheWrite]]), has 1`},
		{[]string{"--model.prices", "openai/a=1,-2"}, `price "-2" must be a number from 0 to 1000000`},
		{[]string{"--model.prices", "openai/a=1,2;openai/a=3,4"}, `model.prices[1]: prices this model twice`},
		{[]string{"--model.thinkingLevel", "maximum"}, `model.thinkingLevel`},
	} {
		_, err := load(t, "", env, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: err = %v, want one line containing %q", tc.args, err, tc.want)
		}
	}
}
