package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/rpcserver"
)

// Issue 24: `starter rpc --protocol 0.73` picks pi 0.73's message_update
// (with the answer so far); the default is pi 1.6's; a bad value is named.
func TestProtocolArg(t *testing.T) {
	for _, tc := range []struct {
		in   string
		rest []string
		want rpcserver.Protocol
	}{
		{"--mode rpc", []string{"--mode", "rpc"}, rpcserver.ProtocolPi16},
		{"--protocol 0.73 --mode rpc", []string{"--mode", "rpc"}, rpcserver.ProtocolPi073},
		{"--session s --protocol=1.6", []string{"--session", "s"}, rpcserver.ProtocolPi16},
	} {
		rest, p, err := protocolArg(strings.Fields(tc.in))
		if err != nil || p != tc.want || !reflect.DeepEqual(rest, tc.rest) {
			t.Errorf("protocolArg(%q) = %v, %q, %v; want %v, %q", tc.in, rest, p, err, tc.rest, tc.want)
		}
	}
	if _, _, err := protocolArg([]string{"--protocol", "0.5"}); err == nil || !strings.Contains(err.Error(), `invalid protocol "0.5"`) {
		t.Errorf("--protocol 0.5: error = %v", err)
	}
	if _, _, err := protocolArg([]string{"--protocol"}); err == nil || !strings.Contains(err.Error(), "needs a value") {
		t.Errorf("--protocol without value: error = %v", err)
	}
}
