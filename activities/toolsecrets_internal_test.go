package activities

import (
	"context"
	"encoding/base64"
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
