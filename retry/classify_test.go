package retry

import (
	"strings"
	"testing"
	"time"
)

func errOutcome(msg string) Outcome { return Outcome{StopReason: "error", ErrorMessage: msg} }

func boolPtr(b bool) *bool { return &b }

// checkClass runs a table of outcomes against their expected class.
func checkClass(t *testing.T, cases []struct {
	name string
	o    Outcome
	want Class
}) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.o)
			if got.Class != tc.want {
				t.Fatalf("Classify(%+v) = %q (pattern %q), want %q", tc.o, got.Class, got.Pattern, tc.want)
			}
			if got.Class != ClassNone && got.Pattern == "" {
				t.Fatalf("Classify(%+v) = %q with no pattern naming the match", tc.o, got.Class)
			}
		})
	}
}

// SPEC 2: only stopReason "error" can be retried; success and abort are not errors.
func TestClassify_NotAnErrorIsNone(t *testing.T) {
	checkClass(t, []struct {
		name string
		o    Outcome
		want Class
	}{
		{"stop", Outcome{StopReason: "stop"}, ClassNone},
		{"length", Outcome{StopReason: "length"}, ClassNone},
		{"toolUse", Outcome{StopReason: "toolUse"}, ClassNone},
		{"aborted", Outcome{StopReason: "aborted", ErrorMessage: "Request was aborted"}, ClassNone},
		{"stop with retryable-looking text", Outcome{StopReason: "stop", ErrorMessage: "503 overloaded"}, ClassNone},
		{"aborted with structured status", Outcome{StopReason: "aborted", ErrorStatus: 503}, ClassNone},
		{"usage within the window", Outcome{StopReason: "stop", InputTokens: 100, CacheReadTokens: 50, ContextWindow: 150}, ClassNone},
	})
}

// SPEC 2: errorMessage must be non-empty; an empty error with nothing else is fatal.
func TestClassify_EmptyErrorMessageIsFatal(t *testing.T) {
	got := Classify(Outcome{StopReason: "error"})
	if got.Class != ClassFatal || got.Pattern != "empty error message" {
		t.Fatalf("Classify(empty error) = %+v, want fatal with pattern %q", got, "empty error message")
	}
	// With a structured field the classifier has something to go on.
	if got := Classify(Outcome{StopReason: "error", ErrorStatus: 503}); got.Class != ClassRetryable {
		t.Fatalf("Classify(empty text, status 503) = %+v, want retryable", got)
	}
}

// SPEC 2: every listed provider wording of context overflow is recognised.
func TestClassify_OverflowWordings(t *testing.T) {
	msgs := map[string]string{
		"anthropic":         `prompt is too long: 213462 tokens > 200000 maximum`,
		"bedrock":           `Input is too long for requested model.`,
		"openai":            `Your input exceeds the context window of this model. Please adjust your input and try again.`,
		"gemini":            `The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).`,
		"xai":               `This model's maximum prompt length is 131072 but the request contains 537812 tokens.`,
		"groq":              `Please reduce the length of the messages or completion.`,
		"openrouter":        `This endpoint's maximum context length is 128000 tokens. However, you requested about 150000 tokens.`,
		"copilot":           `prompt token count of 140535 exceeds the limit of 128000`,
		"llama.cpp":         `the request exceeds the available context size, try increasing it`,
		"lm studio":         `Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 8192 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input. The number of tokens is greater than the context length`,
		"minimax":           `invalid params, context window exceeds limit (2013)`,
		"kimi":              `Your request exceeded model token limit: 262144`,
		"code underscore":   `{"error":{"code":"context_length_exceeded"}}`,
		"code spaces":       `Context length exceeded for this model`,
		"too many tokens":   `Too many tokens in the request`,
		"token limit":       `Token limit exceeded`,
		"request too large": `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}`,
		"bare 400 no body":  `400 status code (no body)`,
		"bare 413 no body":  `413 (no body)`,
		"upper case":        `PROMPT IS TOO LONG`,
	}
	for name, msg := range msgs {
		t.Run(name, func(t *testing.T) {
			o := errOutcome(msg)
			if got := Classify(o); got.Class != ClassContextOverflow {
				t.Fatalf("Classify(%q) = %+v, want context overflow", msg, got)
			}
		})
	}
}

// SPEC 2: a 400/500 with a body, or "(no body)" on a non-overflow status, is no overflow.
func TestClassify_NoBodyOnlyFor400And413(t *testing.T) {
	checkClass(t, []struct {
		name string
		o    Outcome
		want Class
	}{
		{"500 no body is a server error", errOutcome("500 status code (no body)"), ClassRetryable},
		{"400 with a body is fatal", errOutcome("400 status code: invalid tool schema"), ClassFatal},
		{"4000 no body is not a status", errOutcome("4000 (no body)"), ClassFatal},
	})
}

// SPEC 2: silent overflow, input + cache-read tokens above the window, goes to compaction.
func TestClassify_SilentOverflow(t *testing.T) {
	over := Outcome{InputTokens: 150_000, CacheReadTokens: 60_000, ContextWindow: 200_000}
	cases := []struct {
		name       string
		stopReason string
		want       Class
	}{
		{"successful stop", "stop", ClassContextOverflow},
		{"length", "length", ClassContextOverflow},
		{"error with retryable text", "error", ClassContextOverflow},
		{"aborted by the user stays none", "aborted", ClassNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := over
			o.StopReason = tc.stopReason
			if tc.stopReason == "error" {
				o.ErrorMessage = "503 Service Unavailable"
			}
			got := Classify(o)
			if got.Class != tc.want {
				t.Fatalf("Classify(%+v) = %+v, want %q", o, got, tc.want)
			}
			if tc.want == ClassContextOverflow && got.Pattern != "silent overflow" {
				t.Fatalf("pattern = %q, want %q", got.Pattern, "silent overflow")
			}
		})
	}
	t.Run("unknown window never overflows", func(t *testing.T) {
		o := Outcome{StopReason: "stop", InputTokens: 1 << 30}
		if got := Classify(o); got.Class != ClassNone {
			t.Fatalf("Classify(%+v) = %+v, want none", o, got)
		}
	})
	t.Run("input plus cache read against the window", func(t *testing.T) {
		for _, tt := range []struct {
			name                     string
			input, cacheRead, window int
			want                     Class
		}{
			{"well inside", 1000, 2000, 200000, ClassNone},
			{"one above window", 150001, 50000, 200000, ClassContextOverflow},
			{"cache read alone above window", 0, 200001, 200000, ClassContextOverflow},
			{"input alone above window", 200001, 0, 200000, ClassContextOverflow},
			{"negative window", 10, 10, -5, ClassNone},
		} {
			o := Outcome{StopReason: "stop", InputTokens: tt.input, CacheReadTokens: tt.cacheRead, ContextWindow: tt.window}
			if got := Classify(o); got.Class != tt.want {
				t.Errorf("%s: Classify(%+v) = %+v, want %q", tt.name, o, got, tt.want)
			}
		}
	})
	t.Run("exactly the window is not over", func(t *testing.T) {
		o := Outcome{StopReason: "stop", InputTokens: 150_000, CacheReadTokens: 50_000, ContextWindow: 200_000}
		if got := Classify(o); got.Class != ClassNone {
			t.Fatalf("Classify(%+v) = %+v, want none", o, got)
		}
	})
}

// SPEC 2: overflow is checked first and wins when a retryable pattern or field also matches.
func TestClassify_OverflowWinsOverRetryable(t *testing.T) {
	checkClass(t, []struct {
		name string
		o    Outcome
		want Class
	}{
		{"503 text with overflow text", errOutcome("503 upstream said: prompt is too long: 210000 tokens"), ClassContextOverflow},
		{"rate limit text with overflow text", errOutcome("rate limit: too many tokens"), ClassContextOverflow},
		{"status 503 field", Outcome{StopReason: "error", ErrorStatus: 503, ErrorMessage: "prompt is too long"}, ClassContextOverflow},
		{"overloaded type", Outcome{StopReason: "error", ErrorType: "overloaded_error", ErrorMessage: "maximum context length is 8192 tokens"}, ClassContextOverflow},
		{"x-should-retry true", Outcome{StopReason: "error", ShouldRetry: boolPtr(true), ErrorMessage: "prompt is too long"}, ClassContextOverflow},
		{"x-should-retry false", Outcome{StopReason: "error", ShouldRetry: boolPtr(false), ErrorMessage: "prompt is too long"}, ClassContextOverflow},
		{"invalid_request_error with overflow text", Outcome{StopReason: "error", ErrorType: "invalid_request_error", ErrorStatus: 400, ErrorMessage: "prompt is too long: 201000 tokens > 200000 maximum"}, ClassContextOverflow},
		{"status 413", Outcome{StopReason: "error", ErrorStatus: 413, ErrorMessage: "Payload Too Large"}, ClassContextOverflow},
		{"type request_too_large", Outcome{StopReason: "error", ErrorType: "request_too_large", ErrorMessage: "Request exceeds the maximum size"}, ClassContextOverflow},
		{"type context_length_exceeded", Outcome{StopReason: "error", ErrorType: "context_length_exceeded", ErrorMessage: "too long"}, ClassContextOverflow},
	})
}

// SPEC 2: each pattern of the retryable set starts a retry.
func TestClassify_RetryablePatterns(t *testing.T) {
	checkClass(t, []struct {
		name string
		o    Outcome
		want Class
	}{
		{"overloaded", errOutcome(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), ClassRetryable},
		{"rate limit", errOutcome("Rate limit exceeded, slow down"), ClassRetryable},
		{"rate_limit", errOutcome("rate_limit_error: too fast"), ClassRetryable},
		{"ratelimit", errOutcome("RateLimitError"), ClassRetryable},
		{"too many requests", errOutcome("Too Many Requests"), ClassRetryable},
		{"429", errOutcome("HTTP 429"), ClassRetryable},
		{"500", errOutcome("500 Internal"), ClassRetryable},
		{"502", errOutcome("502 Bad Gateway"), ClassRetryable},
		{"503", errOutcome("status 503"), ClassRetryable},
		{"504", errOutcome("504 Gateway Timeout"), ClassRetryable},
		{"529", errOutcome(`529  {"type":"error"}`), ClassRetryable},
		{"service unavailable", errOutcome("Service Unavailable"), ClassRetryable},
		{"service_unavailable", errOutcome("code: service_unavailable"), ClassRetryable},
		{"server error", errOutcome("The server had an error: server error"), ClassRetryable},
		{"internal error", errOutcome("An internal error has occurred"), ClassRetryable},
		{"connection error", errOutcome("Connection error."), ClassRetryable},
		{"APIConnectionError", errOutcome("APIConnectionError: boom"), ClassRetryable},
		{"fetch failed", errOutcome("TypeError: fetch failed"), ClassRetryable},
		{"retry delay", errOutcome(`"retryDelay": "7s"`), ClassRetryable},
		{"connection reset", errOutcome("read tcp 10.0.0.1:443: connection reset by peer"), ClassRetryable},
		{"ECONNRESET", errOutcome("ECONNRESET"), ClassRetryable},
		{"connection refused", errOutcome("dial tcp 127.0.0.1:8080: connect: connection refused"), ClassRetryable},
		{"ECONNREFUSED", errOutcome("connect ECONNREFUSED 127.0.0.1:11434"), ClassRetryable},
		{"socket hang up", errOutcome("socket hang up"), ClassRetryable},
		{"other side closed", errOutcome("SocketError: other side closed"), ClassRetryable},
		{"unexpected EOF", errOutcome("stream read: unexpected EOF"), ClassRetryable},
		{"broken pipe", errOutcome("write: broken pipe"), ClassRetryable},
		{"i/o timeout", errOutcome("read tcp: i/o timeout"), ClassRetryable},
		{"timed out", errOutcome("request timed out"), ClassRetryable},
		{"ETIMEDOUT", errOutcome("connect ETIMEDOUT"), ClassRetryable},
		{"client timeout", errOutcome("net/http: request canceled (Client.Timeout exceeded while awaiting headers)"), ClassRetryable},
		// pi 1.6.0's additions to what it retries, as it words them.
		{"pi: connection closed", errOutcome("Connection closed."), ClassRetryable},
		{"pi: read ECONNRESET", errOutcome("read ECONNRESET"), ClassRetryable},
		{"pi: write EPIPE", errOutcome("write EPIPE"), ClassRetryable},
		{"pi: connect ETIMEDOUT", errOutcome("connect ETIMEDOUT 104.18.6.192:443"), ClassRetryable},
	})
}

// SPEC 2 [fix]: status-like numbers match as whole numbers only.
func TestClassify_WholeNumberStatusCodes(t *testing.T) {
	checkClass(t, []struct {
		name string
		o    Outcome
		want Class
	}{
		{"token count 15000", errOutcome("invalid request: 15000 tokens requested"), ClassFatal},
		{"model id -0429", errOutcome("unknown parameter for model-0429"), ClassFatal},
		{"dated model id", errOutcome("bad value for claude-3-haiku-20240429"), ClassFatal},
		{"image size 1504x1504", errOutcome("image 1504x1504 has an unsupported format"), ClassFatal},
		{"5000", errOutcome("field x must be below 5000"), ClassFatal},
		{"500ms", errOutcome("value 500ms is invalid"), ClassFatal},
		{"502 inside a digit run", errOutcome("request id 25021 rejected"), ClassFatal},
		{"503 inside a digit run", errOutcome("payload of 15030 bytes rejected"), ClassFatal},
		{"529 inside a digit run", errOutcome("seed 15290 is invalid"), ClassFatal},
		{"429 inside a word", errOutcome("unknown model gpt429x"), ClassFatal},
		{"HTTP 503", errOutcome("HTTP 503"), ClassRetryable},
		{"status 429", errOutcome("status 429"), ClassRetryable},
		{"(529)", errOutcome("provider error (529)"), ClassRetryable},
		{"500:", errOutcome("500: oops"), ClassRetryable},
		{"code=502", errOutcome("code=502"), ClassRetryable},
		{"at end 504", errOutcome("upstream returned 504"), ClassRetryable},
	})
}

// SPEC 2: usage-limit and quota errors take the usage-limit branch.
func TestClassify_UsageLimit(t *testing.T) {
	checkClass(t, []struct {
		name string
		o    Outcome
		want Class
	}{
		{"usage limit text", errOutcome("You have hit your usage limit. Try again in 3 hours."), ClassUsageLimit},
		{"usage_limit_reached", errOutcome(`{"error":{"type":"usage_limit_reached"}}`), ClassUsageLimit},
		{"limit_reached", errOutcome("plan_limit_reached"), ClassUsageLimit},
		{"insufficient_quota", errOutcome("insufficient_quota"), ClassUsageLimit},
		{"exceeded your current quota", errOutcome("429 You exceeded your current quota, please check your plan and billing details."), ClassUsageLimit},
		{"quota exceeded", errOutcome("Quota exceeded for metric generate_content_requests"), ClassUsageLimit},
		{"RESOURCE_EXHAUSTED", errOutcome("RESOURCE_EXHAUSTED"), ClassUsageLimit},
		{"type insufficient_quota", Outcome{StopReason: "error", ErrorType: "insufficient_quota", ErrorStatus: 429, ErrorMessage: "no more money"}, ClassUsageLimit},
		{"type billing_error", Outcome{StopReason: "error", ErrorType: "billing_error", ErrorMessage: "billing"}, ClassUsageLimit},
		{"type upper case", Outcome{StopReason: "error", ErrorType: "RESOURCE_EXHAUSTED", ErrorMessage: "quota"}, ClassUsageLimit},
		{"status 429 with usage text", Outcome{StopReason: "error", ErrorStatus: 429, ErrorMessage: "usage limit reached for this plan"}, ClassUsageLimit},
		{"rate_limit_error with usage text", Outcome{StopReason: "error", ErrorType: "rate_limit_error", ErrorMessage: "Claude usage limit reached"}, ClassUsageLimit},
		{"should retry with quota type", Outcome{StopReason: "error", ShouldRetry: boolPtr(true), ErrorType: "insufficient_quota", ErrorMessage: "x"}, ClassUsageLimit},
		{"status 402", Outcome{StopReason: "error", ErrorStatus: 402, ErrorMessage: "Payment Required"}, ClassUsageLimit},
		{"status 429 plain is a rate limit", Outcome{StopReason: "error", ErrorStatus: 429, ErrorMessage: "slow down"}, ClassRetryable},
		{"rate limit reached is not a usage limit", errOutcome("Rate limit reached for gpt-4o in organization org-x on requests per min"), ClassRetryable},
	})
}

// SPEC 2 [beyond]: structured status, type and x-should-retry are used before text.
func TestClassify_StructuredFieldsBeforeText(t *testing.T) {
	checkClass(t, []struct {
		name string
		o    Outcome
		want Class
	}{
		{"type overloaded_error, bland text", Outcome{StopReason: "error", ErrorType: "overloaded_error", ErrorMessage: "try later"}, ClassRetryable},
		{"type rate_limit_error", Outcome{StopReason: "error", ErrorType: "rate_limit_error", ErrorMessage: "x"}, ClassRetryable},
		{"type api_error", Outcome{StopReason: "error", ErrorType: "api_error", ErrorMessage: "x"}, ClassRetryable},
		{"type server_error", Outcome{StopReason: "error", ErrorType: "server_error", ErrorMessage: "x"}, ClassRetryable},
		{"type timeout", Outcome{StopReason: "error", ErrorType: "timeout", ErrorMessage: "x"}, ClassRetryable},
		{"type authentication_error beats 503 text", Outcome{StopReason: "error", ErrorType: "authentication_error", ErrorMessage: "503 overloaded"}, ClassFatal},
		{"type permission_error", Outcome{StopReason: "error", ErrorType: "permission_error", ErrorMessage: "rate limit"}, ClassFatal},
		{"type not_found_error", Outcome{StopReason: "error", ErrorType: "not_found_error", ErrorMessage: "server error"}, ClassFatal},
		{"type invalid_request_error", Outcome{StopReason: "error", ErrorType: "invalid_request_error", ErrorMessage: "max_tokens: 500 is too small"}, ClassFatal},
		{"type before status", Outcome{StopReason: "error", ErrorType: "invalid_request_error", ErrorStatus: 503, ErrorMessage: "x"}, ClassFatal},
		{"status 408", Outcome{StopReason: "error", ErrorStatus: 408, ErrorMessage: "x"}, ClassRetryable},
		{"status 409", Outcome{StopReason: "error", ErrorStatus: 409, ErrorMessage: "x"}, ClassRetryable},
		{"status 429", Outcome{StopReason: "error", ErrorStatus: 429, ErrorMessage: "x"}, ClassRetryable},
		{"status 500", Outcome{StopReason: "error", ErrorStatus: 500, ErrorMessage: "x"}, ClassRetryable},
		{"status 502", Outcome{StopReason: "error", ErrorStatus: 502, ErrorMessage: "x"}, ClassRetryable},
		{"status 503", Outcome{StopReason: "error", ErrorStatus: 503, ErrorMessage: "x"}, ClassRetryable},
		{"status 504", Outcome{StopReason: "error", ErrorStatus: 504, ErrorMessage: "x"}, ClassRetryable},
		{"status 529", Outcome{StopReason: "error", ErrorStatus: 529, ErrorMessage: "x"}, ClassRetryable},
		{"status 401 beats overloaded text", Outcome{StopReason: "error", ErrorStatus: 401, ErrorMessage: "overloaded"}, ClassFatal},
		{"status 403", Outcome{StopReason: "error", ErrorStatus: 403, ErrorMessage: "server error"}, ClassFatal},
		{"status 404", Outcome{StopReason: "error", ErrorStatus: 404, ErrorMessage: "503"}, ClassFatal},
		{"status 400 with a number in text", Outcome{StopReason: "error", ErrorStatus: 400, ErrorMessage: "max_tokens must be <= 500"}, ClassFatal},
		{"x-should-retry false beats 503", Outcome{StopReason: "error", ShouldRetry: boolPtr(false), ErrorStatus: 503, ErrorMessage: "overloaded"}, ClassFatal},
		{"x-should-retry true beats 400", Outcome{StopReason: "error", ShouldRetry: boolPtr(true), ErrorStatus: 400, ErrorMessage: "odd"}, ClassRetryable},
		{"status 200 mid-stream falls to text", Outcome{StopReason: "error", ErrorStatus: 200, ErrorMessage: `event: error {"type":"overloaded_error"}`}, ClassRetryable},
		{"unknown type falls to text", Outcome{StopReason: "error", ErrorType: "weird_error", ErrorMessage: "Service Unavailable"}, ClassRetryable},
		{"unknown type and text is fatal", Outcome{StopReason: "error", ErrorType: "weird_error", ErrorMessage: "no idea"}, ClassFatal},
	})
	t.Run("pattern names the field", func(t *testing.T) {
		got := Classify(Outcome{StopReason: "error", ErrorType: "Overloaded_Error", ErrorStatus: 529, ErrorMessage: "x"})
		if got.Pattern != "type overloaded_error" {
			t.Fatalf("pattern = %q, want %q", got.Pattern, "type overloaded_error")
		}
		got = Classify(Outcome{StopReason: "error", ErrorStatus: 503, ErrorMessage: "x"})
		if got.Pattern != "status 503" {
			t.Fatalf("pattern = %q, want %q", got.Pattern, "status 503")
		}
	})
}

// SPEC 2: anything else that failed is fatal and never retried.
func TestClassify_FatalErrors(t *testing.T) {
	checkClass(t, []struct {
		name string
		o    Outcome
		want Class
	}{
		{"invalid api key", errOutcome(`401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`), ClassFatal},
		{"model not found", errOutcome("model: claude-nonexistent not found"), ClassFatal},
		{"max_tokens invalid", errOutcome("max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4"), ClassFatal},
		{"terminated is not transient on its own", errOutcome("account terminated"), ClassFatal},
		{"plain garbage", errOutcome("something odd happened"), ClassFatal},
	})
}

// SPEC 4: the retry hint in the error text is reported with the classification.
func TestClassify_ReportsRetryHint(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name     string
		o        Outcome
		now      time.Time
		wantHint bool
		wantMs   int64
	}{
		{"relative hint without clock", errOutcome("429 rate limit, retry-after: 30"), time.Time{}, true, 30_000},
		{"usage limit with ms hint", errOutcome("usage limit; retry-after-ms=1500"), time.Time{}, true, 1500},
		{"date hint ignored without clock", errOutcome("429 retry-after: Thu, 02 Jan 2025 03:05:05 GMT"), time.Time{}, false, 0},
		{"date hint with clock", errOutcome("429 retry-after: Thu, 02 Jan 2025 03:05:05 GMT"), now, true, 60_000},
		{"no hint", errOutcome("503 overloaded"), now, false, 0},
		{"success carries none", Outcome{StopReason: "stop", ErrorMessage: "retry-after: 5"}, now, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ClassifyAt(tc.o, tc.now)
			if got.HasHint != tc.wantHint || got.RetryAfterMs != tc.wantMs {
				t.Fatalf("ClassifyAt(%q) hint = (%d, %v), want (%d, %v)", tc.o.ErrorMessage, got.RetryAfterMs, got.HasHint, tc.wantMs, tc.wantHint)
			}
		})
	}
	if got := Classify(errOutcome("503; retry-after: 2")); got != ClassifyAt(errOutcome("503; retry-after: 2"), time.Time{}) {
		t.Fatalf("Classify and ClassifyAt(zero time) differ: %+v", got)
	}
}

// SPEC 2: the Pattern of a text match names the regexp that matched.
func TestClassify_PatternNamesTextMatch(t *testing.T) {
	got := Classify(errOutcome("HTTP 503 from upstream"))
	if !strings.Contains(got.Pattern, "503") {
		t.Fatalf("pattern = %q, want it to name 503", got.Pattern)
	}
	got = Classify(errOutcome("prompt is too long"))
	if got.Pattern != "prompt is too long" {
		t.Fatalf("pattern = %q, want %q", got.Pattern, "prompt is too long")
	}
}
