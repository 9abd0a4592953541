package cli

import (
	"strings"
	"testing"
)

// The terminal agent's RpcClient starts its CLI with `--mode rpc` and,
// when asked, `--provider P --model M`: starter rpc takes them as its own
// settings flags, so a one-line shim starts it unchanged.
func TestPiArgs(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"--mode rpc --session s1", "--session s1", ""},
		{"--mode=rpc", "", ""},
		{"--mode json", "", `--mode "json": starter rpc serves mode rpc only`},
		{"--provider anthropic --model claude-x", "--model.provider anthropic --model.name claude-x", ""},
		{"--model openai/gpt-x:high", "--model.provider openai --model.thinkingLevel high --model.name gpt-x", ""},
		{"--model llama3:8b", "--model.name llama3:8b", ""},
		{"--model", "", "flag --model needs a value"},
	} {
		got, err := piArgs(strings.Fields(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("%q → %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
