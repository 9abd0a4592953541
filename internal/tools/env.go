package tools

import "strings"

// secretSuffixes end the names of variables that hold secrets.
// "PASSWORD" and "PASSWD" need no underscore (PGPASSWORD).
var secretSuffixes = []string{"_KEY", "_TOKEN", "_SECRET", "PASSWORD", "PASSWD", "_PASS", "_PWD",
	"_CREDENTIALS", "_CREDENTIAL", "_CREDS", "_AUTH"}

// secretPrefixes start the names of variables withheld as a whole: the
// model providers' and the worker's own configuration (DURABLE_AGENT_*:
// the session database URL, the codec key, ...), which no job needs.
var secretPrefixes = []string{"ANTHROPIC_", "OPENAI_", "DURABLE_AGENT_"}

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
// name (case-insensitive) ends in _KEY, _TOKEN, _SECRET, PASSWORD, PASSWD,
// _PASS, _PWD, _CREDENTIALS, _CREDENTIAL, _CREDS or _AUTH or contains API_KEY
// or APIKEY; the ANTHROPIC_*, OPENAI_* and DURABLE_AGENT_* variables;
// TEMPORAL_API_KEY and the TEMPORAL_TLS_* key material; and any variable
// whose value is a URL carrying a password (postgres://user:pw@host,
// DATABASE_URL and the like). Names in allow (case-insensitive) are kept
// anyway. The input is not modified.
//
// This keeps the worker's credentials out of a command's environment; it
// is not a sandbox: bash runs as the worker's user and can read what that
// user can read.
func ScrubEnv(env []string, allow []string) []string {
	allowed := make(map[string]bool, len(allow))
	for _, a := range allow {
		allowed[strings.ToUpper(strings.TrimSpace(a))] = true
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		up := strings.ToUpper(name)
		if (isSecretName(up) || hasURLPassword(value)) && !allowed[up] {
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

// hasURLPassword reports whether value holds a URL whose user info carries
// a password (scheme://user:password@host...), anywhere in the value.
func hasURLPassword(value string) bool {
	for rest := value; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return false
		}
		rest = rest[i+3:]
		authority := rest
		if j := strings.IndexAny(authority, "/?# "); j >= 0 {
			authority = authority[:j]
		}
		if at := strings.LastIndex(authority, "@"); at > 0 && strings.Contains(authority[:at], ":") {
			return true
		}
	}
}
