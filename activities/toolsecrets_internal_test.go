package activities

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 20 item 4: a command the user runs (RPC bash) that prints a
// withheld variable of the worker — from the worker's /proc/<pid>/environ
// and base64-encoded — is stored and previewed redacted.
// Spec 14.4.4.
func TestUserBash_OutputIsRedactedOfTheWorkersSecrets(t *testing.T) {
	const value = TestEnvSecretValue
	store, ws := userBashStore(t)
	cmd := `tr '\0' '\n' < /proc/$PPID/environ | grep ` + TestEnvSecretName + `; printf %s ` + value + ` | base64`
	res, err := userBash(t, store, context.Background(), UserBashInput{SessionID: "s1", EntryID: "b1", Command: cmd, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := store.Load("s1")
	e, ok := sess.Get("b1")
	if !ok {
		t.Fatal("no bashExecution entry")
	}
	b64 := base64.StdEncoding.EncodeToString([]byte(value))
	for name, text := range map[string]string{"stored output": e.Message.Output, "preview": res.Preview} {
		if strings.Contains(text, value) || strings.Contains(text, b64) {
			t.Errorf("%s holds the secret: %q", name, text)
		}
	}
	if !strings.Contains(e.Message.Output, TestEnvSecretName+"=[redacted]") || strings.Count(e.Message.Output, "[redacted]") != 2 {
		t.Errorf("stored output %q: want the variable read through /proc and the base64 masked", e.Message.Output)
	}
}

// The full-output file is redacted in a stream: a secret across the
// boundary of the chunks read, and its base64, are masked; a file without
// any is left as it was.
// Spec 14.4.4.
func TestRedactor_FileAcrossChunks(t *testing.T) {
	const secret = "file-K8dQ2mZr6Tb1Yw4Lx"
	r := newMessageRedactor(secret)
	dir := t.TempDir()
	path := filepath.Join(dir, "bash-1.log")
	var content bytes.Buffer
	content.Write(bytes.Repeat([]byte("a"), fileChunk-5)) // the secret spans the first boundary
	content.WriteString(secret + "\n")
	content.WriteString(strings.Repeat("line\n", fileChunk/5))
	content.WriteString("b64: " + base64.StdEncoding.EncodeToString([]byte("user:"+secret)) + "\nend\n")
	if err := os.WriteFile(path, content.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.file(path); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if bytes.Contains(got, []byte(secret)) || bytes.Contains(got, []byte(base64.StdEncoding.EncodeToString([]byte(secret))[2:20])) {
		t.Fatal("the secret is still in the file")
	}
	if n := bytes.Count(got, []byte(redacted)); n != 2 {
		t.Fatalf("%d redaction markers, want 2", n)
	}
	want := strings.Replace(content.String(), secret, redacted, 1)
	if !strings.HasPrefix(string(got), want[:fileChunk+len(redacted)]) || !strings.HasSuffix(string(got), "\nend\n") ||
		len(got) > len(want) {
		t.Fatal("the rest of the file changed")
	}

	clean := filepath.Join(dir, "bash-2.log")
	if err := os.WriteFile(clean, []byte("nothing secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(clean)
	if err := r.file(clean); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(clean)
	if !os.SameFile(before, after) || after.Mode() != before.Mode() {
		t.Fatal("a file without secrets was rewritten")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".redact-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}
