package tools

import (
	"os"
	"reflect"
	"testing"
)

func TestScrubEnv(t *testing.T) {
	env := []string{
		"PATH=/usr/bin:/bin", "HOME=/home/me", "LANG=C.UTF-8", "GOPATH=/go",
		"FOO_API_KEY=k1", "GITHUB_TOKEN=k2", "DB_PASSWORD=k3", "ANTHROPIC_API_KEY=k4",
		"ANTHROPIC_BASE_URL=https://x", "OPENAI_ORG=o", "AWS_SECRET_ACCESS_KEY=k5",
		"SMTP_PASS=k6", "GOOGLE_APPLICATION_CREDENTIALS=/c.json", "MYAPIKEY=k7", "stripe_secret=k8",
		"DURABLE_AGENT_CODEC_KEY=k9", "TEMPORAL_API_KEY=k10", "TEMPORAL_TLS_KEY_DATA=k11",
		"TEMPORAL_TLS_CERT=/cert.pem", "TEMPORAL_ADDRESS=localhost:7233", "KEYBOARD=us", "PASSAGE=x",
		"PGPASSWORD=k12", "DURABLE_AGENT_SESSION_POSTGRESURL=postgres://a@db/x", "DATABASE_URL=postgres://app:k13@db:5432/app",
		"MIRRORS=https://a.example https://u:k14@b.example/repo", "MYSQL_PWD=k15", "NPM_CONFIG__AUTH=k16",
		"PWD=/work", "OLDPWD=/", "HOMEPAGE=https://me@example.org/x", "REPO=git@github.com:me/x.git",
	}
	kept := []string{
		"PATH=/usr/bin:/bin", "HOME=/home/me", "LANG=C.UTF-8", "GOPATH=/go",
		"TEMPORAL_TLS_CERT=/cert.pem", "TEMPORAL_ADDRESS=localhost:7233", "KEYBOARD=us", "PASSAGE=x",
		"PWD=/work", "OLDPWD=/", "HOMEPAGE=https://me@example.org/x", "REPO=git@github.com:me/x.git",
	}
	if got := ScrubEnv(env, nil); !reflect.DeepEqual(got, kept) {
		t.Fatalf("ScrubEnv:\n got %q\nwant %q", got, kept)
	}
	got := ScrubEnv(env, []string{"github_token", "ANTHROPIC_BASE_URL"})
	want := append([]string{}, kept[:4]...)
	want = append(want, "GITHUB_TOKEN=k2", "ANTHROPIC_BASE_URL=https://x")
	want = append(want, kept[4:]...)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ScrubEnv with allow:\n got %q\nwant %q", got, want)
	}
	if env[4] != "FOO_API_KEY=k1" {
		t.Fatal("ScrubEnv modified its input")
	}
}

func TestBashEnvironment(t *testing.T) {
	secrets := map[string]string{
		"FOO_API_KEY": "secret-foo", "GITHUB_TOKEN": "secret-gh",
		"DB_PASSWORD": "secret-db", "ANTHROPIC_API_KEY": "secret-anthropic",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("DA_TEST_PLAIN", "visible")
	ws := t.TempDir()

	t.Run("default environment is scrubbed", func(t *testing.T) {
		r := call(t, Options{Workspace: ws}, "bash", obj{"command": "env"})
		mustOK(t, r)
		mustContain(t, r.Content, "PATH=", "DA_TEST_PLAIN=visible")
		if home := os.Getenv("HOME"); home != "" {
			mustContain(t, "\n"+r.Content+"\n", "\nHOME="+home+"\n")
		}
		for k, v := range secrets {
			mustNotContain(t, r.Content, k+"=", v)
		}
	})
	t.Run("allow-listed secrets are shown", func(t *testing.T) {
		env := ScrubEnv(os.Environ(), []string{"GITHUB_TOKEN", "DB_PASSWORD"})
		r := call(t, Options{Workspace: ws, Env: env}, "bash", obj{"command": "env"})
		mustOK(t, r)
		mustContain(t, r.Content, "GITHUB_TOKEN=secret-gh", "DB_PASSWORD=secret-db", "PATH=")
		mustNotContain(t, r.Content, "FOO_API_KEY", "ANTHROPIC_API_KEY")
	})
	t.Run("explicit environment is used as is", func(t *testing.T) {
		r := call(t, Options{Workspace: ws, Env: []string{"ONLY=this", "PATH=/usr/bin:/bin"}}, "bash", obj{"command": "echo $ONLY ${GITHUB_TOKEN:-none}"})
		mustOK(t, r)
		if r.Content != "this none" {
			t.Fatalf("got %q", r.Content)
		}
	})
}
