package settings

import "github.com/durableagent/durableagent/internal/egress"

// allowHostItem accepts a tools.sandbox.allowHosts entry; repeats are
// judged by its normal form (Example.COM and example.com are one).
func allowHostItem(it string) (any, string) {
	p, err := egress.ParsePattern(it)
	if err != nil {
		return nil, err.Error()
	}
	return p.String(), ""
}
