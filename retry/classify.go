package retry

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// textPattern is one case-insensitive regexp of the text classifier; its
// source (without the flag) is what Classification.Pattern reports.
type textPattern struct {
	src string
	re  *regexp.Regexp
}

func patterns(srcs ...string) []textPattern {
	out := make([]textPattern, len(srcs))
	for i, src := range srcs {
		out[i] = textPattern{src: src, re: regexp.MustCompile(`(?i)` + src)}
	}
	return out
}

// firstMatch returns the source of the first pattern matching text.
func firstMatch(ps []textPattern, text string) (string, bool) {
	for _, p := range ps {
		if p.re.MatchString(text) {
			return p.src, true
		}
	}
	return "", false
}

// overflowPatterns are the providers' context-overflow wordings (SPEC 2).
var overflowPatterns = patterns(
	`prompt is too long`,                     // Anthropic
	`input is too long for requested model`,  // Amazon Bedrock
	`exceeds the context window`,             // OpenAI
	`input token count.*exceeds the maximum`, // Google Gemini
	`maximum prompt length is \d+`,           // xAI
	`reduce the length of the messages`,      // Groq
	`maximum context length is \d+ tokens`,   // OpenRouter
	`exceeds the limit of \d+`,               // GitHub Copilot
	`exceeds the available context size`,     // llama.cpp
	`greater than the context length`,        // LM Studio
	`context window exceeds limit`,           // MiniMax
	`exceeded model token limit`,             // Kimi
	`context[_ ]length[_ ]exceeded`,          // generic, OpenAI's error code
	`too many tokens`,                        // generic
	`token limit exceeded`,                   // generic
	`request_too_large`,                      // Anthropic 413 type in the body
	// Cerebras and Mistral answer an oversized request with a bare 400 or
	// 413 and no body; the SDKs print "400 status code (no body)".
	`\b4(?:00|13)\b\W*(?:status code)?\s*\(no body\)`,
)

// usageLimitPatterns mark a credential or plan that ran out (SPEC 2):
// retryable, through the usage-limit branch. Checked before
// retryablePatterns, which also contain usage.?limit.
var usageLimitPatterns = patterns(
	`usage.?limit`,        // Codex "usage_limit_reached", subscription plans
	`limit_reached`,       // the original's catch-all for *_limit_reached codes
	`insufficient.?quota`, // OpenAI billing quota
	`exceeded (?:your |the )?(?:current )?quota`, // OpenAI, Gemini
	`quota (?:has been |was )?exceeded`,
	`resource.?exhausted`, // Google's RESOURCE_EXHAUSTED (quota)
)

// retryablePatterns are the SPEC 2 retryable set. Status-like numbers are
// whole numbers only ([fix]): "15000 tokens", "model-0429" and
// "1504x1504" do not match, because \b needs a non-word neighbour.
var retryablePatterns = patterns(
	`overloaded`,
	`rate.?limit`,
	`too many requests`,
	`\b429\b`,
	`\b500\b`,
	`\b502\b`,
	`\b503\b`,
	`\b504\b`,
	// Anthropic's overloaded status; Go prints it without status text
	// ("529  {...}"), so the number is all there may be.
	`\b529\b`,
	`service.?unavailable`,
	`server.?error`,
	`internal.?error`,
	`connection.?error`, // also the workflow's text for a lost worker (SPEC 7)
	`fetch failed`,
	`retry.?delay`,
	// Transport failures beyond the original list: each is a connection
	// cut or stalled between us and the provider, which a later attempt
	// can get past, and none of them names a problem with the request.
	`connection reset`, `econnreset`, // peer reset the TCP connection
	`connection refused`, `econnrefused`, // local servers restarting
	`socket hang up`,                             // Node-based proxies closing idle sockets
	`other side closed`,                          // undici (Node fetch) proxies
	`unexpected eof`,                             // Go: a response body cut mid-stream
	`broken pipe`,                                // Go: writing to a closed connection
	`i/o timeout`,                                // Go net timeouts
	`timed out`, `etimedout`, `timeout exceeded`, // Client.Timeout and friends
	// "terminated" (undici's cut-stream error) is left out on purpose: the
	// word also appears in permanent errors ("account terminated").
)

// Structured error types, lower-cased. Anthropic: overloaded_error,
// rate_limit_error, api_error, timeout_error, billing_error,
// request_too_large, authentication_error, permission_error,
// not_found_error, invalid_request_error. OpenAI: server_error,
// rate_limit_exceeded, insufficient_quota, context_length_exceeded,
// invalid_api_key, model_not_found. Codex: usage_limit_reached. Google
// status names: UNAVAILABLE, INTERNAL, DEADLINE_EXCEEDED,
// RESOURCE_EXHAUSTED, UNAUTHENTICATED, PERMISSION_DENIED, NOT_FOUND,
// INVALID_ARGUMENT.
var (
	overflowTypes  = set("request_too_large", "context_length_exceeded")
	retryableTypes = set("overloaded_error", "rate_limit_error", "rate_limit_exceeded",
		"api_error", "server_error", "timeout_error", "timeout", "unavailable",
		"internal", "deadline_exceeded", "service_unavailable")
	usageLimitTypes = set("insufficient_quota", "usage_limit_reached", "quota_exceeded",
		"billing_error", "billing_hard_limit_reached", "resource_exhausted")
	fatalTypes = set("authentication_error", "permission_error", "not_found_error",
		"invalid_request_error", "invalid_api_key", "model_not_found",
		"unauthenticated", "permission_denied", "not_found", "invalid_argument")
)

// HTTP statuses with a fixed meaning. Statuses in none of these sets
// (200 with an error event mid-stream, 418, ...) fall through to the text.
var (
	// 408 request timeout, 409 conflict (a lock timeout at the provider;
	// the vendor SDKs retry it), 429, the 5xx gateway/server classes, and
	// Anthropic's 529 overloaded.
	retryableStatuses = map[int]bool{408: true, 409: true, 429: true, 500: true,
		502: true, 503: true, 504: true, 529: true}
	// 402 payment required: the credential's credit or plan ran out, which
	// another credential may not share.
	usageLimitStatuses = map[int]bool{402: true}
	// Client errors that the same request can never get past. 400 is here
	// so a number in its text ("max_tokens must be <= 500") cannot read as
	// a server error; 400 "(no body)" is an overflow and matched earlier.
	fatalStatuses = map[int]bool{400: true, 401: true, 403: true, 404: true,
		405: true, 422: true}
)

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// Classify is ClassifyAt without a clock: retry hints given as an HTTP date
// or a Unix epoch cannot be turned into a wait and are ignored; relative
// hints ("retry-after: 30", "try again in 20s") still count.
func Classify(o Outcome) Classification {
	return ClassifyAt(o, time.Time{})
}

// ClassifyAt classifies the last assistant message of an agent run (SPEC
// 2) and reads its retry hint relative to now (the workflow passes
// workflow.Now). Precedence, first rule that applies wins:
//
//  1. Not an error (StopReason other than "error"): ClassNone, except a
//     silent overflow on a message that was not aborted.
//  2. Context overflow: silent overflow (input + cache-read tokens above
//     ContextWindow), status 413, type request_too_large or
//     context_length_exceeded, or an overflow wording in the text. It
//     comes before everything else because resending a too-long request
//     cannot succeed, whatever status or x-should-retry wrapped it; it
//     goes to compaction instead.
//  3. An error with no text and no structured field: fatal.
//  4. ShouldRetry (x-should-retry), the provider's explicit word: false is
//     fatal, true retryable.
//  5. ErrorType, when it is a known type.
//  6. ErrorStatus, when it is a known status.
//  7. The text: usage-limit wordings, then the retryable set.
//  8. Anything else: fatal.
//
// A retryable verdict from rules 4-6 becomes ClassUsageLimit when the type
// or the text names a usage limit or quota (a 429 "usage limit reached",
// a rate_limit_error about a plan's limit). The hint (RetryAfterMs,
// HasHint) is read from the text of every error, whatever its class.
func ClassifyAt(o Outcome, now time.Time) Classification {
	if o.StopReason != "error" {
		if o.StopReason != "aborted" && silentOverflow(o) {
			return Classification{Class: ClassContextOverflow, Pattern: "silent overflow"}
		}
		return Classification{Class: ClassNone}
	}
	c := classifyError(o)
	c.RetryAfterMs, c.HasHint = ParseRetryHint(o.ErrorMessage, now)
	return c
}

// IsContextOverflow reports whether the outcome goes to compaction rather
// than to retry (the original's isContextOverflow).
func IsContextOverflow(o Outcome) bool {
	if o.StopReason == "aborted" {
		return false
	}
	if o.StopReason != "error" {
		return silentOverflow(o)
	}
	_, ok := overflow(o)
	return ok
}

func classifyError(o Outcome) Classification {
	if p, ok := overflow(o); ok {
		return Classification{Class: ClassContextOverflow, Pattern: p}
	}
	typ := strings.ToLower(strings.TrimSpace(o.ErrorType))
	if o.ErrorMessage == "" && typ == "" && o.ErrorStatus == 0 && o.ShouldRetry == nil {
		return Classification{Class: ClassFatal, Pattern: "empty error message"}
	}
	if o.ShouldRetry != nil {
		if !*o.ShouldRetry {
			return Classification{Class: ClassFatal, Pattern: "x-should-retry: false"}
		}
		return retryable(o, typ, "x-should-retry: true")
	}
	if typ != "" {
		p := "type " + typ
		switch {
		case usageLimitTypes[typ]:
			return Classification{Class: ClassUsageLimit, Pattern: p}
		case retryableTypes[typ]:
			return retryable(o, typ, p)
		case fatalTypes[typ]:
			return Classification{Class: ClassFatal, Pattern: p}
		}
	}
	if s := o.ErrorStatus; s != 0 {
		p := fmt.Sprintf("status %d", s)
		switch {
		case usageLimitStatuses[s]:
			return Classification{Class: ClassUsageLimit, Pattern: p}
		case retryableStatuses[s]:
			return retryable(o, typ, p)
		case fatalStatuses[s]:
			return Classification{Class: ClassFatal, Pattern: p}
		}
	}
	if p, ok := firstMatch(usageLimitPatterns, o.ErrorMessage); ok {
		return Classification{Class: ClassUsageLimit, Pattern: p}
	}
	if p, ok := firstMatch(retryablePatterns, o.ErrorMessage); ok {
		return Classification{Class: ClassRetryable, Pattern: p}
	}
	return Classification{Class: ClassFatal, Pattern: "no retryable pattern"}
}

// retryable is a structured retryable verdict, refined to the usage-limit
// branch when the type or the text says the limit is a usage limit.
func retryable(o Outcome, typ, pattern string) Classification {
	if usageLimitTypes[typ] {
		return Classification{Class: ClassUsageLimit, Pattern: pattern + ", type " + typ}
	}
	if p, ok := firstMatch(usageLimitPatterns, o.ErrorMessage); ok {
		return Classification{Class: ClassUsageLimit, Pattern: pattern + ", " + p}
	}
	return Classification{Class: ClassRetryable, Pattern: pattern}
}

// overflow applies rule 2 to an error outcome and names what matched.
func overflow(o Outcome) (string, bool) {
	if silentOverflow(o) {
		return "silent overflow", true
	}
	if o.ErrorStatus == 413 {
		return "status 413", true
	}
	if typ := strings.ToLower(strings.TrimSpace(o.ErrorType)); overflowTypes[typ] {
		return "type " + typ, true
	}
	return firstMatch(overflowPatterns, o.ErrorMessage)
}

// silentOverflow: the provider accepted a request larger than the model's
// window (z.ai style) and reported the usage; the next turn would fail.
func silentOverflow(o Outcome) bool {
	return o.ContextWindow > 0 && o.InputTokens+o.CacheReadTokens > o.ContextWindow
}
