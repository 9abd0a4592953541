package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/rpcserver"
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
		got, _, err := piArgs(strings.Fields(tc.in))
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

// Issue 24: `starter rpc --protocol 0.73` picks pi 0.73's message_update
// (with the answer so far); the default is pi 1.6's; a bad value is named.
func TestProtocolArg(t *testing.T) {
	for _, tc := range []struct {
		in   string
		rest []string
		want rpcserver.Protocol
	}{
		{"--session s", []string{"--session", "s"}, rpcserver.ProtocolPi16},
		{"--protocol 0.73 --mode rpc", []string{}, rpcserver.ProtocolPi073},
		{"--session s --protocol=1.6", []string{"--session", "s"}, rpcserver.ProtocolPi16},
		{"-protocol 0.73", []string{}, rpcserver.ProtocolPi073},
	} {
		rest, p, err := piArgs(strings.Fields(tc.in))
		if err != nil || p != tc.want || !reflect.DeepEqual(rest, tc.rest) {
			t.Errorf("piArgs(%q) = %v, %q, %v; want %v, %q", tc.in, rest, p, err, tc.rest, tc.want)
		}
	}
	if _, _, err := piArgs([]string{"--protocol", "0.5"}); err == nil || !strings.Contains(err.Error(), `invalid protocol "0.5"`) {
		t.Errorf("--protocol 0.5: error = %v", err)
	}
	if _, _, err := piArgs([]string{"--protocol"}); err == nil || !strings.Contains(err.Error(), "needs a value") {
		t.Errorf("--protocol without value: error = %v", err)
	}
}
