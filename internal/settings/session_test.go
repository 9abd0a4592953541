package settings

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestSessionStore_DefaultsAndChoices(t *testing.T) {
	env := newEnv(t, nil)
	s, err := load(t, "", env)
	if err != nil {
		t.Fatal(err)
	}
	if s.Session.Store != SessionStoreJSONL || s.Session.PostgresURL != "" {
		t.Errorf("session = %+v, want jsonl and no URL", s.Session)
	}
	env = newEnv(t, map[string]string{"DURABLE_AGENT_SESSION_STORE": "postgres",
		"DURABLE_AGENT_SESSION_POSTGRESURL": "postgres://agent@db:5432/agent"})
	if s, err = load(t, "", env); err != nil || s.Session.Store != "postgres" || s.Session.PostgresURL != "postgres://agent@db:5432/agent" {
		t.Fatalf("session = %+v, %v", s.Session, err)
	}
	env = newEnv(t, map[string]string{"DURABLE_AGENT_SESSION_STORE": "sqlite"})
	if _, err = load(t, "", env); err == nil || !strings.Contains(err.Error(), "session.store") {
		t.Fatalf("session.store sqlite: %v, want an error naming the key", err)
	}
}

// The password in session.postgresUrl never shows in the JSON of the
// settings (`starter settings --json`).
func TestSessionStore_JSONHidesPassword(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://agent:s3cret@db:5432/agent?sslmode=require": "postgres://agent:xxxxx@db:5432/agent?sslmode=require",
		"postgres://agent@db/agent":                             "postgres://agent@db/agent",
		"host=db user=agent password=s3cret dbname=agent":       "host=db user=agent password=xxxxx dbname=agent",
		"host=db password='s3 cret' dbname=agent":               "host=db password=xxxxx dbname=agent",
	} {
		b, err := json.Marshal(Session{Store: "postgres", PostgresURL: in})
		if err != nil {
			t.Fatal(err)
		}
		var got Session
		_ = json.Unmarshal(b, &got)
		if strings.Contains(string(b), "s3") || got.PostgresURL != want {
			t.Errorf("%s: JSON %s, want postgresUrl %s", in, b, want)
		}
	}
}

// The password of session.postgresUrl, in either form, is what the worker
// masks in tool output (app.SettingsSecrets): a key=value string's
// password alone must be known, not only the whole string.
func TestDSNPassword_EitherForm(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://agent:s3cret@db:5432/agent":           "s3cret",
		"postgres://agent@db/agent":                       "",
		"host=db user=agent password=s3cret dbname=agent": "s3cret",
		"host=db PASSWORD = 'it\\'s a secret' dbname=x":   "it's a secret",
		"host=db user=agent dbname=agent":                 "",
	} {
		if got := DSNPassword(in); got != want {
			t.Errorf("DSNPassword(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSource_NamesWhereAValueComesFrom(t *testing.T) {
	newEnv(t, map[string]string{"DURABLE_AGENT_MODEL_PROVIDER": "scripted"})
	file := writeYAML(t, "model:\n  name: m1\n")
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	AddFlags(fs)
	if err := fs.Parse([]string{"--retry.maxRetries=5"}); err != nil {
		t.Fatal(err)
	}
	_, vals, err := Explain(LoadOptions{File: file, Flags: fs})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"model.provider":   "environment DURABLE_AGENT_MODEL_PROVIDER",
		"model.name":       file + ":2",
		"retry.maxRetries": "flag --retry.maxRetries",
		"retry.enabled":    "",
	} {
		if got, err := Source(vals, key); err != nil || got != want {
			t.Errorf("Source(%s) = %q, %v; want %q", key, got, err, want)
		}
	}
	if _, err := Source(vals, "nope"); err == nil {
		t.Error("Source of an unknown key: no error")
	}
}
