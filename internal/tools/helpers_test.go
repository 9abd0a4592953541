package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// workspace creates a temporary workspace holding files (path → content;
// a path ending in "/" is an empty directory).
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// call runs a tool; args is a JSON string or a value to marshal.
func call(t *testing.T, o Options, tool string, args any) Result {
	t.Helper()
	return callCtx(t, context.Background(), o, tool, args)
}

func callCtx(t *testing.T, ctx context.Context, o Options, tool string, args any) Result {
	t.Helper()
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	case nil:
	default:
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	return Run(ctx, tool, raw, o)
}

type obj = map[string]any

func mustOK(t *testing.T, r Result) {
	t.Helper()
	if r.IsError {
		t.Fatalf("unexpected error result: %s", r.Content)
	}
}

func mustErr(t *testing.T, r Result, want ...string) {
	t.Helper()
	if !r.IsError {
		t.Fatalf("expected an error result, got: %s", r.Content)
	}
	for _, w := range want {
		if !strings.Contains(r.Content, w) {
			t.Fatalf("error %q does not contain %q", r.Content, w)
		}
	}
}

func mustContain(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Fatalf("output does not contain %q:\n%s", w, got)
		}
	}
}

func mustNotContain(t *testing.T, got string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(got, w) {
			t.Fatalf("output contains %q:\n%s", w, got)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
