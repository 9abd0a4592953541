package settings

import (
	"fmt"
	"strings"
)

// Fleet-wide limits of model calls (model.maxConcurrentCalls,
// model.callsPerSecond): the worker applies them to a task queue per
// provider (internal/app).

// maxRate bounds model.callsPerSecond.
const maxRate = 100_000

func checkRate(v string) string {
	if _, ok := parseRate(v); !ok {
		return fmt.Sprintf("must be calls per second from 0 (no limit) to %d, e.g. 2 or 0.5", maxRate)
	}
	return ""
}

// parseRate reads model.callsPerSecond ("" is 0).
func parseRate(v string) (float64, bool) { return parseAmount(strings.TrimSpace(v), maxRate) }
