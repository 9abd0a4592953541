package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/testserver"
)

// runIn is run with stdin and a fixed data dir.
func runIn(t *testing.T, home, stdin string, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	env := map[string]string{"DURABLE_AGENT_HOME": home, "TEMPORAL_ADDRESS": "127.0.0.1:1"}
	for k, v := range vars {
		env[k] = v
	}
	testserver.SetEnv(t, env)
	var out, errb bytes.Buffer
	code = Main(args, Env{
		Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(stdin),
	})
	return code, out.String(), errb.String()
}

type classified struct {
	Class        string `json:"class"`
	RetryAfterMs *int64 `json:"retryAfterMs"`
	Pattern      string `json:"pattern"`
}

func decodeLines(t *testing.T, out string) []classified {
	t.Helper()
	var got []classified
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var c classified
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("output line %q: %v", sc.Text(), err)
		}
		got = append(got, c)
	}
	return got
}

// starter classify: one JSON line per input line with class, hint (null
// without one) and pattern; blank lines are skipped.
func TestClassify_PlainLines(t *testing.T) {
	in := "529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n" +
		"\n" +
		"429 rate limit; retry-after: 30\n" +
		"prompt is too long: 213462 tokens > 200000 maximum\n" +
		"You exceeded your current quota, please check your plan and billing details.\n" +
		"401 invalid x-api-key\n"
	code, out, stderr := runIn(t, t.TempDir(), in, nil, "classify")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := decodeLines(t, out)
	want := []struct {
		class string
		hint  int64 // -1: null
	}{{"retryable", -1}, {"retryable", 30000}, {"context_overflow", -1}, {"usage_limit", -1}, {"fatal", -1}}
	if len(got) != len(want) {
		t.Fatalf("%d output lines, want %d:\n%s", len(got), len(want), out)
	}
	for i, w := range want {
		if got[i].Class != w.class || got[i].Pattern == "" {
			t.Fatalf("line %d = %+v, want class %s with a pattern", i, got[i], w.class)
		}
		if (w.hint < 0) != (got[i].RetryAfterMs == nil) || w.hint >= 0 && *got[i].RetryAfterMs != w.hint {
			t.Fatalf("line %d retryAfterMs = %v, want %d (-1: null)", i, got[i].RetryAfterMs, w.hint)
		}
	}
	if !strings.Contains(out, `"retryAfterMs":null`) {
		t.Fatalf("a missing hint is not written as null: %s", out)
	}
}

// --jsonl reads {"message", "status", "type"}; the structured fields
// count ("text" is accepted for the corpus's format).
func TestClassify_JSONLines(t *testing.T) {
	in := `{"message":"try later","type":"overloaded_error"}` + "\n" +
		`{"message":"Payment Required","status":402}` + "\n" +
		`{"text":"Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 342389.","status":429}` + "\n"
	code, out, stderr := runIn(t, t.TempDir(), in, nil, "classify", "--jsonl")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := decodeLines(t, out)
	for i, want := range []string{"retryable", "usage_limit", "context_overflow"} {
		if i >= len(got) || got[i].Class != want {
			t.Fatalf("output %+v, want classes retryable, usage_limit, context_overflow", got)
		}
	}
	code, _, stderr = runIn(t, t.TempDir(), "not json\n", nil, "classify", "--jsonl")
	if code != ExitUsage || !strings.Contains(stderr, "line 1") {
		t.Fatalf("bad JSON: exit %d, stderr %q; want exit 2 naming line 1", code, stderr)
	}
}

// The whole corpus goes through the command and gives the classifier's answers.
func TestClassify_Corpus(t *testing.T) {
	corpus, err := os.ReadFile("../../retry/testdata/errors.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runIn(t, t.TempDir(), string(corpus), nil, "classify", "--jsonl")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Count(strings.TrimSpace(string(corpus)), "\n") + 1
	if got := decodeLines(t, out); len(got) != lines {
		t.Fatalf("%d output lines for %d corpus lines", len(got), lines)
	}
}

// A line longer than the scanner's limit (a 5 MB line: "token too long")
// fails with exit 2 and one line naming the input line and the limit,
// after the lines before it were classified.
func TestClassify_TooLongLineExitsTwoWithOneLineError(t *testing.T) {
	in := "503 Service Unavailable\n" + strings.Repeat("x", 5<<20) + "\n429 Too Many Requests\n"
	code, out, stderr := runIn(t, t.TempDir(), in, nil, "classify")
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitUsage, stderr)
	}
	if want := "starter classify: line 2: longer than 4194304 bytes (4 MiB)"; !strings.HasPrefix(stderr, want) ||
		strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "token too long") {
		t.Fatalf("stderr = %q, want one line starting %q", stderr, want)
	}
	if got := decodeLines(t, out); len(got) != 1 || got[0].Class != "retryable" {
		t.Fatalf("output %q, want the first line classified", out)
	}
	// Just under the limit is still classified.
	code, out, stderr = runIn(t, t.TempDir(), "503 "+strings.Repeat("x", 4<<20-10)+"\n", nil, "classify")
	if code != ExitOK || len(decodeLines(t, out)) != 1 {
		t.Fatalf("a line under the limit: exit %d, stderr %q", code, stderr)
	}
}
