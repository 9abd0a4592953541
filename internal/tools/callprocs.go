package tools

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// CallMarkerEnv names the variable that marks every process of one bash
// call: the command's shell gets it with a value of its own, and every
// process it starts inherits it. When the call ends (the command exits,
// times out or is aborted), the processes still carrying the call's value
// are killed (see endCallProcesses).
const CallMarkerEnv = "DURABLE_AGENT_CALL"

// newCallToken returns a value for CallMarkerEnv that no other call has.
func newCallToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail (Go 1.24+)
	return hex.EncodeToString(b)
}

// withCallMarker returns env with CallMarkerEnv set to token (replacing a
// value inherited from a caller: a worker run inside another's command
// marks its own calls).
func withCallMarker(env []string, token string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, CallMarkerEnv+"=") {
			out = append(out, kv)
		}
	}
	return append(out, CallMarkerEnv+"="+token)
}
