package tools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// secretSuffixes end the names of variables that hold secrets.
// "PASSWORD" and "PASSWD" need no underscore (PGPASSWORD).
// The others: Rails' SECRET_KEY_BASE, AWS_ACCESS_KEY_ID, a webhook URL
// (its path is the credential), a personal access token (GH_PAT), PEM key
// or certificate material, a key's passphrase, a connection string
// (Azure's carry AccountKey=), a salt, a bundle of secrets.
var secretSuffixes = []string{"_KEY", "_TOKEN", "_SECRET", "PASSWORD", "PASSWD", "_PASS", "_PWD",
	"_CREDENTIALS", "_CREDENTIAL", "_CREDS", "_AUTH",
	"_KEY_BASE", "_KEY_ID", "WEBHOOK_URL", "_WEBHOOK", "_PAT", "_PEM", "_PASSPHRASE",
	"_CONNECTION_STRING", "_SALT", "_SECRETS", "_AUTH_CONFIG"}

// secretInfixes anywhere in a name mark key material
// (GOOGLE_PRIVATE_KEY_DATA, AWS_SECRET_ACCESS_KEY_ID).
var secretInfixes = []string{"API_KEY", "APIKEY", "PRIVATE_KEY", "SECRET_KEY", "ACCESS_KEY"}

// withheldPrefixes start the names of variables withheld as a whole: the
// model providers' and the worker's own configuration (DURABLE_AGENT_*),
// which no job needs. Only those among them that hold a secret by the
// other rules (DURABLE_AGENT_CODEC_KEY, ANTHROPIC_API_KEY, a database URL
// with a password) are secrets that output is redacted of: a provider, a
// model name or a base URL is withheld, not masked.
var withheldPrefixes = []string{"ANTHROPIC_", "OPENAI_", "DURABLE_AGENT_"}

// secretNames are withheld by name (the others, such as TEMPORAL_API_KEY,
// DOCKER_AUTH_CONFIG or DURABLE_AGENT_CODEC_KEY, by the rules above).
var secretNames = map[string]bool{"TOKEN": true, "SECRET": true, "DSN": true}

// ScrubEnv returns env (KEY=VALUE entries) without secrets: variables whose
// name (case-insensitive) ends in one of secretSuffixes (_KEY, _TOKEN,
// _SECRET, PASSWORD, _PAT, _PEM, WEBHOOK_URL, ...) or contains one of
// secretInfixes (API_KEY, PRIVATE_KEY, ACCESS_KEY, ...); the ANTHROPIC_*,
// OPENAI_*, DURABLE_AGENT_* and TF_TOKEN_* variables; TEMPORAL_API_KEY,
// DOCKER_AUTH_CONFIG and the TEMPORAL_TLS_* key material; a *_DSN whose
// URL names a user (https://KEY@sentry.io/1); and any variable whose value
// is a URL carrying a password (postgres://user:pw@host, DATABASE_URL and
// the like) or a key as its user (https://ghp_…@github.com/x.git). Names
// in allow (case-insensitive) are kept anyway. The input is not modified.
//
// This keeps the worker's credentials out of a command's environment; it
// is not a sandbox: bash runs as the worker's user and can read what that
// user can read.
func ScrubEnv(env []string, allow []string) []string {
	allowed := upperSet(allow)
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		up := strings.ToUpper(name)
		withheld := slices.ContainsFunc(withheldPrefixes, func(p string) bool { return strings.HasPrefix(up, p) })
		if (withheld || isSecret(up, value)) && !allowed[up] {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// upperSet is the set of names, upper-cased and trimmed.
func upperSet(names []string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[strings.ToUpper(strings.TrimSpace(n))] = true
	}
	return set
}

// isSecret reports whether the variable of upper-cased name up and value
// holds a secret.
func isSecret(up, value string) bool {
	return isSecretName(up) || slices.ContainsFunc(urlUserinfos(value), func(u userinfo) bool {
		return u.password != "" || keyLike(u.user) || (up == "DSN" || strings.HasSuffix(up, "_DSN")) && u.user != ""
	})
}

// isSecretName reports whether the upper-cased variable name names a
// secret: Terraform's registry tokens (TF_TOKEN_*) and TEMPORAL_TLS_KEY,
// TEMPORAL_TLS_KEY_DATA, ... besides the lists above.
func isSecretName(up string) bool {
	return secretNames[up] || strings.HasPrefix(up, "TF_TOKEN_") ||
		slices.ContainsFunc(secretSuffixes, func(s string) bool { return strings.HasSuffix(up, s) }) ||
		slices.ContainsFunc(secretInfixes, func(s string) bool { return strings.Contains(up, s) }) ||
		strings.HasPrefix(up, "TEMPORAL_TLS_") && strings.Contains(up, "KEY")
}

// userinfo is the user and password of a URL's authority.
type userinfo struct{ user, password string }

// urlUserinfos returns the user info of every URL in value
// (scheme://user:password@host...) that has one.
func urlUserinfos(value string) []userinfo {
	var out []userinfo
	for rest := value; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return out
		}
		rest = rest[i+3:]
		authority := rest
		if j := strings.IndexAny(authority, "/?# \n\t\"'"); j >= 0 {
			authority = authority[:j]
		}
		if at := strings.LastIndex(authority, "@"); at > 0 {
			user, password, _ := strings.Cut(authority[:at], ":")
			out = append(out, userinfo{user, password})
		}
	}
}

// keyLike says whether a URL's user is a key rather than a name: 20 or
// more characters mixing letters and digits (a Sentry key, a GitHub token
// in a clone URL). "git", "me" or "app" are names.
func keyLike(user string) bool {
	return len(user) >= 20 && strings.ContainsAny(user, "0123456789") &&
		strings.ContainsFunc(user, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' })
}

// MinSecretLen is the length below which a secret value is not redacted
// from output by itself: shorter values match ordinary text.
const MinSecretLen = 8

// SecretEnvValues returns the secret values in env that output should be
// redacted of: the value of every variable ScrubEnv withholds as a secret
// by its name or its URL's password (not the worker's and the providers'
// configuration withheld by prefix alone: DURABLE_AGENT_MODEL_PROVIDER=
// anthropic is no secret; names in allow, given to bash on purpose, are
// left out), the passwords and
// key-like users of the URLs in those values, and each line of a
// multi-line value (a PEM block's body) but its ----- armour lines; each
// at least MinSecretLen long, in env order, without duplicates. A value
// that is the absolute path of an existing file
// (GOOGLE_APPLICATION_CREDENTIALS=/etc/app/creds.json) is no secret
// itself and is left out.
func SecretEnvValues(env []string, allow []string) []string {
	allowed := upperSet(allow)
	var out []string
	seen := map[string]bool{}
	add := func(v string) {
		if len(v) >= MinSecretLen && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		up := strings.ToUpper(name)
		if allowed[up] || !isSecret(up, value) || isPath(value) {
			continue
		}
		add(value)
		for _, u := range urlUserinfos(value) {
			add(u.password)
			if keyLike(u.user) {
				add(u.user)
			}
		}
		if strings.Contains(value, "\n") {
			for _, line := range strings.Split(value, "\n") {
				if line = strings.TrimSpace(line); !strings.HasPrefix(line, "-----") {
					add(line)
				}
			}
		}
	}
	return out
}

// isPath says whether v is the absolute path of an existing file or
// directory.
func isPath(v string) bool {
	if !filepath.IsAbs(v) {
		return false
	}
	_, err := os.Stat(v)
	return err == nil
}
