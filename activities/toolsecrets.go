package activities

import (
	"context"
	"os"
	"slices"

	"go.temporal.io/sdk/activity"

	"github.com/durableagent/durableagent/internal/tools"
)

// outputRedactor is the redactor of tool output (messageRedactor.known):
// every secret value this worker knows, read at call time: the credential
// store's, the values of the environment variables withheld from bash
// (tools.SecretEnvValues: provider keys, the codec key, database URLs and
// their passwords, tokens; a name in tools.envAllow is given to bash on
// purpose and left out) and a.Secrets (the worker's settings).
func (a *Activities) outputRedactor(ctx context.Context) *messageRedactor {
	out := slices.Concat(a.Secrets, tools.SecretEnvValues(os.Environ(), a.ToolPolicy.EnvAllow))
	if a.Credentials != nil {
		s, err := a.Credentials.Secrets()
		if err != nil {
			// The store cannot be read now: redact what else is known.
			activity.GetLogger(ctx).Warn("tool output: list the credential store's secrets to redact them", "error", err)
		}
		out = append(out, s...)
	}
	return newMessageRedactor(out...)
}

// needles are the texts masked in a command's output as it is written
// (tools.Options.Secrets): the secrets, their URL-encoded forms and the
// base64 texts that hold their bits.
func (r *messageRedactor) needles() []string {
	out := append(append([]string(nil), r.secrets...), r.escaped...)
	for _, f := range r.b64 {
		out = append(out, f.core)
	}
	return out
}
