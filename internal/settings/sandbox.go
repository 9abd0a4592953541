package settings

import "github.com/durableagent/durableagent/internal/egress"

// ToolsSandbox is the `tools.sandbox` group: the worker's policy for the
// sandbox bash runs in.
type ToolsSandbox struct {
	// AllowHosts are the egress proxy's allow-list entries (see
	// egress.ParsePattern) for tools.sandbox.network allowlist.
	AllowHosts []string `json:"allowHosts,omitempty"`
}

// allowHostItem accepts a tools.sandbox.allowHosts entry; repeats are
// judged by its normal form (Example.COM and example.com are one).
func allowHostItem(it string) (any, string) {
	p, err := egress.ParsePattern(it)
	if err != nil {
		return nil, err.Error()
	}
	return p.String(), ""
}
