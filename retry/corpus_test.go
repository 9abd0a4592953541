package retry

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// corpusItem is one line of testdata/errors.jsonl: a real provider error
// text with its source, labelled with the class it should get.
type corpusItem struct {
	Text     string `json:"text"`
	Status   int    `json:"status,omitempty"`
	Type     string `json:"type,omitempty"`
	Label    Class  `json:"label"`
	Source   string `json:"source"`
	Provider string `json:"provider"`
}

// action is what the agent does with a class: the four classes collapse
// into three actions, and the action is what must be right.
func action(c Class) string {
	switch c {
	case ClassRetryable, ClassUsageLimit:
		return "retry"
	case ClassContextOverflow:
		return "compact"
	}
	return "stop"
}

func loadCorpus(t *testing.T) []corpusItem {
	t.Helper()
	f, err := os.Open("testdata/errors.jsonl")
	if err != nil {
		t.Fatalf("open corpus: %v", err)
	}
	defer f.Close()
	var items []corpusItem
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var it corpusItem
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&it); err != nil {
			t.Fatalf("corpus line %d: %v", line, err)
		}
		switch it.Label {
		case ClassRetryable, ClassUsageLimit, ClassContextOverflow, ClassFatal:
		default:
			t.Fatalf("corpus line %d: label %q is not one of retryable, usage_limit, context_overflow, fatal", line, it.Label)
		}
		if it.Text == "" || it.Source == "" || it.Provider == "" {
			t.Fatalf("corpus line %d: text, source and provider are required", line)
		}
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read corpus: %v", err)
	}
	return items
}

// TestCorpus_Shape keeps the corpus honest: big enough, every provider
// family the classifier claims to know is present, and composed texts
// (source "synthetic:<reason>") stay a small minority.
func TestCorpus_Shape(t *testing.T) {
	items := loadCorpus(t)
	if len(items) < 150 {
		t.Fatalf("corpus has %d items, want at least 150", len(items))
	}
	providers := map[string]int{}
	synthetic := 0
	for _, it := range items {
		providers[it.Provider]++
		if strings.HasPrefix(it.Source, "synthetic:") {
			synthetic++
			if len(strings.TrimPrefix(it.Source, "synthetic:")) < 10 {
				t.Errorf("synthetic item %q does not say why it was composed", it.Text)
			}
		} else if !strings.HasPrefix(it.Source, "https://") {
			t.Errorf("item %q: source %q is neither a URL nor synthetic:<reason>", it.Text, it.Source)
		}
	}
	if synthetic*10 > len(items) {
		t.Errorf("%d of %d items are synthetic; keep them under 10%%", synthetic, len(items))
	}
	for _, p := range []string{"anthropic", "openai", "gemini", "vertex", "bedrock", "azure", "openrouter",
		"groq", "mistral", "xai", "deepseek", "llama.cpp", "ollama", "vllm", "lmstudio",
		"transport-node", "transport-go"} {
		if providers[p] == 0 {
			t.Errorf("corpus has no %s errors", p)
		}
	}
}

// TestCorpus_ClassifierOnRealErrors is SPEC 2 measured: the classifier's
// action (retry / compact / stop) must be right on at least 95% of real
// error texts, and no fatal error may ever be retried. Per-class accuracy
// and every miss are printed (go test -v).
func TestCorpus_ClassifierOnRealErrors(t *testing.T) {
	items := loadCorpus(t)
	type tally struct{ n, class, action int }
	per := map[Class]*tally{}
	actionOK, retriedFatal := 0, 0
	var misses []string
	for _, it := range items {
		got := Classify(Outcome{StopReason: "error", ErrorMessage: it.Text, ErrorStatus: it.Status, ErrorType: it.Type})
		tl := per[it.Label]
		if tl == nil {
			tl = &tally{}
			per[it.Label] = tl
		}
		tl.n++
		if got.Class == it.Label {
			tl.class++
		}
		if action(got.Class) == action(it.Label) {
			tl.action++
			actionOK++
		}
		if it.Label == ClassFatal && got.Class.Retryable() {
			retriedFatal++
		}
		if got.Class != it.Label {
			misses = append(misses, fmt.Sprintf("want %-16s got %-16s (%s) [%s] %.140q", it.Label, got.Class, got.Pattern, it.Provider, it.Text))
		}
	}
	classes := make([]string, 0, len(per))
	for c := range per {
		classes = append(classes, string(c))
	}
	sort.Strings(classes)
	t.Logf("%-17s %5s %14s %14s", "label", "items", "class ok", "action ok")
	for _, c := range classes {
		tl := per[Class(c)]
		t.Logf("%-17s %5d %8d %4.0f%% %8d %4.0f%%", c, tl.n, tl.class, pct(tl.class, tl.n), tl.action, pct(tl.action, tl.n))
	}
	acc := pct(actionOK, len(items))
	t.Logf("action accuracy: %d/%d = %.1f%%; fatal errors retried: %d", actionOK, len(items), acc, retriedFatal)
	for _, m := range misses {
		t.Log("miss: " + m)
	}
	if acc < 95 {
		t.Errorf("action accuracy %.1f%% is below 95%%", acc)
	}
	if retriedFatal > 0 {
		t.Errorf("%d fatal errors would be retried", retriedFatal)
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// The hard cases of the corpus as rules (SPEC 2): look-alikes that must
// land on the other side of the line.
func TestClassify_HardCases(t *testing.T) {
	cases := []struct {
		name string
		o    Outcome
		want Class
	}{
		{"TPM request too large is an overflow, not a rate limit",
			Outcome{StopReason: "error", ErrorStatus: 429, ErrorType: "rate_limit_exceeded",
				ErrorMessage: "Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 36278. The input or output tokens must be reduced in order to run successfully."},
			ClassContextOverflow},
		{"Bedrock token throttle is a rate limit, not an overflow",
			Outcome{StopReason: "error", ErrorStatus: 429, ErrorMessage: "Too many tokens, please wait before trying again."}, ClassRetryable},
		{"Bedrock daily token throttle is a usage limit",
			errOutcome("ThrottlingException: Too many tokens per day, please wait before trying again."), ClassUsageLimit},
		{"500 whose body is a context-size error",
			Outcome{StopReason: "error", ErrorStatus: 500, ErrorType: "server_error", ErrorMessage: `{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}`},
			ClassContextOverflow},
		{"max_tokens above the model's output limit is fatal",
			Outcome{StopReason: "error", ErrorStatus: 400, ErrorType: "invalid_request_error", ErrorMessage: "max_tokens: 128001 > 64000, which is the maximum allowed number of output tokens for claude-opus-4-5"},
			ClassFatal},
		{"a completion budget filling the window is fatal, not an overflow",
			errOutcome("This model's maximum context length is 8192 tokens. However, you requested 8256 tokens (64 in the messages, 8192 in the completion). Please reduce the length of the messages or completion."),
			ClassFatal},
		{"the same wording with a long input is an overflow",
			errOutcome("This model's maximum context length is 4097 tokens. However, you requested 4203 tokens (3703 in the messages, 500 in the completion). Please reduce the length of the messages or completion."),
			ClassContextOverflow},
		{"credits asked for fewer max_tokens is a usage limit, not fatal",
			Outcome{StopReason: "error", ErrorStatus: 402, ErrorMessage: "This request requires more credits, or fewer max_tokens. You requested up to 64000 tokens, but can only afford 2666."},
			ClassUsageLimit},
		{"credit balance too low beats its 400 invalid_request_error",
			Outcome{StopReason: "error", ErrorStatus: 400, ErrorType: "invalid_request_error", ErrorMessage: "Your credit balance is too low to access the Anthropic API."},
			ClassUsageLimit},
		{"your account's rate limit is a usage limit",
			Outcome{StopReason: "error", ErrorStatus: 429, ErrorType: "rate_limit_error", ErrorMessage: "This request would exceed your account's rate limit. Please try again later."},
			ClassUsageLimit},
		{"a daily 429 is a usage limit",
			errOutcome("429 Rate limit reached for model `llama-3.3-70b-versatile` on tokens per day (TPD): Limit 100000, Used 97050, Requested 3619."),
			ClassUsageLimit},
		{"a per-minute quota is a rate limit",
			errOutcome("Quota exceeded for quota metric 'Generate Content API requests per minute'"), ClassRetryable},
		{"Vertex resource exhausted, try again later, is a rate limit",
			Outcome{StopReason: "error", ErrorType: "RESOURCE_EXHAUSTED", ErrorMessage: "Resource exhausted. Please try again later."}, ClassRetryable},
		{"capacity trouble sent as invalid_request_error is retryable",
			Outcome{StopReason: "error", ErrorType: "invalid_request_error", ErrorMessage: "Service tier capacity exceeded for this model."}, ClassRetryable},
		{"a missing model is fatal whatever the type says",
			Outcome{StopReason: "error", ErrorType: "api_error", ErrorMessage: `model "llama9" not found, try pulling it first`}, ClassFatal},
		{"a key error is fatal on a 400 too",
			errOutcome(`400 "Incorrect API key provided: gs***tF. You can obtain an API key from https://console.x.ai."`), ClassFatal},
		{"undici terminated is a transport failure",
			errOutcome("TypeError: terminated"), ClassRetryable},
		{"Go EOF before the response is a transport failure",
			errOutcome(`Post "https://api.openai.com/v1/chat/completions": EOF`), ClassRetryable},
		{"Go context deadline is a transport failure",
			errOutcome("context deadline exceeded (Client.Timeout or context cancellation while reading body)"), ClassRetryable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.o)
			if got.Class != tc.want {
				t.Fatalf("Classify(%q) = %q (pattern %q), want %q", tc.o.ErrorMessage, got.Class, got.Pattern, tc.want)
			}
			if IsContextOverflow(tc.o) != (tc.want == ClassContextOverflow) {
				t.Fatalf("IsContextOverflow disagrees with Classify for %q", tc.o.ErrorMessage)
			}
		})
	}
}

// A rate limit that asks for a wait of UsageLimitHintMs or more is a
// usage limit (the credential is blocked for the hint); a shorter one
// stays a rate limit.
func TestClassify_LongRetryHintIsUsageLimit(t *testing.T) {
	cases := []struct {
		name string
		msg  string
		want Class
	}{
		{"Azure daily token limit", "429 Requests to the ChatCompletions_Create Operation have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 86400 seconds.", ClassUsageLimit},
		{"ten minutes exactly", "429 rate limit; retry-after-ms=600000", ClassUsageLimit},
		{"just under", "429 rate limit; retry-after-ms=599999", ClassRetryable},
		{"a minute", "429 rate limit; retry-after: 60", ClassRetryable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(errOutcome(tc.msg))
			if got.Class != tc.want || !got.HasHint {
				t.Fatalf("Classify(%q) = %+v, want %q with a hint", tc.msg, got, tc.want)
			}
		})
	}
}
