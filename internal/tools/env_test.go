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

// Issue 20 item 4: the names and values of the kinds of secrets that
// deployments commonly hand a process are withheld from bash; ordinary
// variables of similar names stay.
// Spec 14.4.2.
func TestScrubEnv_WithholdsCommonSecretKinds(t *testing.T) {
	cases := []struct {
		kv       string
		withheld bool
	}{
		{"SECRET_KEY_BASE=3f9a1c0e7b", true},
		{"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", true},
		{"AWS_SESSION_TOKEN=FwoGZXIvYXdzE", true},
		{"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", true},
		{"SENTRY_DSN=https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/1", true},
		{"SENTRY_DSN=https://sentry.example/1", false}, // no key in it
		{"APP_DSN=postgres://app@db/app", true},        // a DSN naming a user
		{"SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T0/B0/XyZ", true},
		{"DISCORD_WEBHOOK=https://discord.com/api/webhooks/1/abc", true},
		{"DOCKER_AUTH_CONFIG={\"auths\":{}}", true},
		{"API_KEY=k", true}, {"apikey=k", true}, {"PASSWORD=k", true}, {"TOKEN=k", true},
		{"SECRET=k", true}, {"DSN=k", true}, {"TOKENS_USED=3", false},
		{"GH_PAT=github_pat_11ABC", true},
		{"AZURE_DEVOPS_PAT=abc123", true},
		{"TLS_CERT_PEM=-----BEGIN CERTIFICATE-----", true},
		{"SIGNING_KEY_PEM=-----BEGIN PRIVATE KEY-----", true},
		{"GPG_PASSPHRASE=correct horse", true},
		{"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountKey=abc", true},
		{"TF_TOKEN_app_terraform_io=abc.atlasv1.def", true},
		{"GOOGLE_PRIVATE_KEY_DATA=MIIEvQ", true},
		{"WP_AUTH_SALT=x7#kq", true},
		{"APP_SECRETS=a:b", true},
		{"GITHUB_TOKEN=ghp_x", true},
		{"GIT_REMOTE=https://ghp_0123456789abcdefABCDEF0123@github.com/me/x.git", true}, // a token as URL user
		{"PATH=/usr/bin", false},
		{"SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", false},
		{"KEYBOARD=us", false},
		{"PATTERN=*.go", false},
		{"HOMEPAGE=https://me@example.org/x", false},
		{"WEBHOOK_TIMEOUT=30", false},
		{"DSN_TIMEOUT=5", false},
		{"EDITOR=vim", false},
	}
	for _, tc := range cases {
		t.Run(tc.kv, func(t *testing.T) {
			got := ScrubEnv([]string{tc.kv}, nil)
			if withheld := len(got) == 0; withheld != tc.withheld {
				t.Fatalf("ScrubEnv(%q) = %q: withheld %v, want %v", tc.kv, got, withheld, tc.withheld)
			}
		})
	}
}

// Issue 20 item 4: SecretEnvValues lists what tool output is redacted
// of: the values of withheld variables, the passwords and key-like users
// of their URLs, the lines of a multi-line value; short values (they
// would match ordinary text) and allowed variables are left out.
// Spec 14.4.4.
func TestSecretEnvValues(t *testing.T) {
	env := []string{
		"PATH=/usr/bin:/bin",
		"ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijkl",
		"DATABASE_URL=postgres://app:hunter2hunter2@db:5432/app",
		"SENTRY_DSN=https://0123456789abcdef0123@o1.ingest.sentry.io/1",
		"SHORT_TOKEN=abc",
		"GITHUB_TOKEN=ghp_allowed_by_settings",
		"TLS_PEM=-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n",
		"HOMEPAGE=https://me@example.org/x",
		"GOOGLE_APPLICATION_CREDENTIALS=" + os.Args[0], // a path, not a secret
		// Withheld, but configuration, not secrets (issue 37 item 6).
		"DURABLE_AGENT_MODEL_PROVIDER=anthropic", "ANTHROPIC_BASE_URL=http://127.0.0.1:8089/v1",
		"DURABLE_AGENT_MODEL_NAME=claude-sonnet-4-5",
	}
	got := SecretEnvValues(env, []string{"github_token"})
	want := []string{
		"sk-ant-api03-abcdefghijkl",
		"postgres://app:hunter2hunter2@db:5432/app", "hunter2hunter2",
		"https://0123456789abcdef0123@o1.ingest.sentry.io/1", "0123456789abcdef0123",
		"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SecretEnvValues:\n got %q\nwant %q", got, want)
	}
}
