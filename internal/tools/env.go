package tools

import "strings"

// secretSuffixes end the names of variables that hold secrets.
var secretSuffixes = []string{"_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_PASS", "_CREDENTIALS"}

// secretPrefixes start the names of variables that belong to the model
// providers and are withheld as a whole.
var secretPrefixes = []string{"ANTHROPIC_", "OPENAI_"}

// secretNames are withheld by name.
var secretNames = map[string]bool{
	"DURABLE_AGENT_CODEC_KEY": true,
	"TEMPORAL_API_KEY":        true,
	"API_KEY":                 true,
	"APIKEY":                  true,
	"TOKEN":                   true,
	"SECRET":                  true,
	"PASSWORD":                true,
}

// ScrubEnv returns env (KEY=VALUE entries) without secrets: variables whose
// name (case-insensitive) ends in _KEY, _TOKEN, _SECRET, _PASSWORD, _PASS or
// _CREDENTIALS or contains API_KEY or APIKEY, the ANTHROPIC_* and OPENAI_*
// variables, DURABLE_AGENT_CODEC_KEY, TEMPORAL_API_KEY and the TEMPORAL_TLS_*
// key material. Names in allow (case-insensitive) are kept anyway. The input
// is not modified.
func ScrubEnv(env []string, allow []string) []string {
	allowed := make(map[string]bool, len(allow))
	for _, a := range allow {
		allowed[strings.ToUpper(strings.TrimSpace(a))] = true
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		up := strings.ToUpper(name)
		if isSecretName(up) && !allowed[up] {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// isSecretName reports whether the upper-cased variable name names a secret.
func isSecretName(up string) bool {
	if secretNames[up] {
		return true
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(up, s) {
			return true
		}
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	if strings.Contains(up, "API_KEY") || strings.Contains(up, "APIKEY") {
		return true
	}
	// TEMPORAL_TLS_KEY, TEMPORAL_TLS_KEY_DATA, TEMPORAL_TLS_KEY_PATH, ...
	if strings.HasPrefix(up, "TEMPORAL_TLS_") && strings.Contains(up, "KEY") {
		return true
	}
	return false
}
