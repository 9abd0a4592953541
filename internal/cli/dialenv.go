package cli

import (
	"os"
	"strings"

	"go.temporal.io/sdk/contrib/envconfig"
)

// envLookup is Env.LookupEnv as the Temporal client profile reads the
// environment (TEMPORAL_ADDRESS, TEMPORAL_API_KEY, TEMPORAL_TLS_*, …), so
// the starter dials with the environment it was given, not the process's.
type envLookup func(string) (string, bool)

func (f envLookup) LookupEnv(k string) (string, bool) { return f(k) }

// Environ lists the variables the lookup answers among the process's
// names (the profile scans it for TEMPORAL_GRPC_META_*).
func (f envLookup) Environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if v, ok := f(k); ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// temporalEnv is the environment of env for the client profile (nil: the
// process environment).
func (env Env) temporalEnv() envconfig.EnvLookup {
	if env.LookupEnv == nil {
		return nil
	}
	return envLookup(env.LookupEnv)
}

// lookupEnv is env.LookupEnv, or os.LookupEnv when it is nil.
func (env Env) lookupEnv() func(string) (string, bool) {
	if env.LookupEnv == nil {
		return os.LookupEnv
	}
	return env.LookupEnv
}
