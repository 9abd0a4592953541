package settings

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
)

// Session is the `session` group: where the worker keeps sessions.
type Session struct {
	Store       string `json:"store"`
	PostgresURL string `json:"postgresUrl"`
	Worktree    bool   `json:"worktree"`
	Host        string `json:"host,omitempty"`
}

// Session stores (session.store).
const (
	SessionStoreJSONL    = "jsonl"
	SessionStorePostgres = "postgres"
)

// MarshalJSON shows the group with the password of PostgresURL masked, so
// `starter settings --json` never prints it.
func (s Session) MarshalJSON() ([]byte, error) {
	type plain Session
	p := plain(s)
	p.PostgresURL = RedactURL(p.PostgresURL)
	return json.Marshal(p)
}

var dsnPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// RedactURL masks the password in a postgres:// URL or a key=value
// connection string.
func RedactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
		return s
	}
	return dsnPassword.ReplaceAllString(s, "${1}xxxxx")
}

// DSNPassword is the password of a postgres:// URL or a key=value
// connection string as the server reads it (a quoted value unquoted), ""
// when there is none: a secret to mask wherever the worker's output goes.
func DSNPassword(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		pw, _ := u.User.Password()
		return pw
	}
	m := dsnPassword.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	if v, ok := strings.CutPrefix(m[2], "'"); ok {
		return dsnEscape.ReplaceAllString(strings.TrimSuffix(v, "'"), "$1")
	}
	return m[2]
}

var dsnEscape = regexp.MustCompile(`\\(.)`)
