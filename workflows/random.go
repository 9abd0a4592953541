package workflows

import (
	"crypto/rand"
	"encoding/hex"
)

// randomHex returns 2n random hex digits. It is only called inside
// workflow.SideEffect, whose result history records.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) //workflowcheck:ignore side effect, recorded in history
	return hex.EncodeToString(b)
}
