package retry

import (
	"strings"
	"testing"
)

// docs/spec.md 2.8 (families): a text no specific wording
// matches is classified by the vocabulary it uses. These texts are
// composed for the test from the runtimes' and clients' documented error
// names, not taken from the corpus: each would have been fatal (the
// agent stops) before the families existed.
func TestFamilies_UnseenVocabularyTakesTheRightAction(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Class
	}{
		// transport failures named by runtimes and clients
		{"java.io.EOFException: \\n not enough bytes", ClassRetryable},
		{"httpcore.ConnectTimeout: [Errno 110]", ClassRetryable},
		{"Error: write EPIPE", ClassRetryable},
		{"System.Threading.Tasks.TaskCanceledException: A task was canceled.", ClassRetryable},
		{"java.net.NoRouteToHostException: No route to host", ClassRetryable},
		{"System.Net.Http.HttpRequestException: An error occurred while sending the request.", ClassRetryable},
		{"reqwest::Error { kind: Request, source: hyper::Error(IncompleteMessage) }", ClassRetryable},
		{"Error: read EHOSTUNREACH", ClassRetryable},
		// a CDN or proxy page, with no status in the text
		{"<!DOCTYPE html><html><head><title>Just a moment...</title></head></html>", ClassRetryable},
		{"HTTP 530 from upstream", ClassRetryable},
		{"HTTP/1.1 507 Insufficient Storage", ClassRetryable},
		// busy servers in other languages
		{"当前模型负载过高，系统繁忙", ClassRetryable},
		{"現在サーバーが混雑しています。しばらくしてから再度お試しください。", ClassRetryable},
		{"요청이 너무 많습니다. 잠시 후 다시 시도해 주세요.", ClassRetryable},
		{"Servidor sobrecarregado, tente novamente mais tarde", ClassRetryable},
		// plans and quotas in words no specific pattern has
		{"You have used up your monthly allowance of agent requests.", ClassUsageLimit},
		{"Vous avez atteint votre limite d'utilisation.", ClassUsageLimit},
		{"配额已用完", ClassUsageLimit},
		// a window that is full, worded by servers the list does not name
		{"error: the conversation exceeds the model's context window (n_ctx=4096)", ClassContextOverflow},
		{"ValueError: Input is too long for the KV size of this model", ClassContextOverflow},
		{"Error: context window is full, cannot continue", ClassContextOverflow},
		{"上下文长度超过模型限制", ClassContextOverflow},
		{"too many input tokens", ClassContextOverflow}, // was retried ("too many")
		{"The request is over the token limit of the model", ClassContextOverflow},
		{"the prompt does not fit into the context window", ClassContextOverflow},
		{"not enough context space left for the request", ClassContextOverflow},
		{"slot context shift disabled: n_ctx_slot exceeded", ClassContextOverflow},
	} {
		got := Classify(Outcome{StopReason: "error", ErrorMessage: tc.text})
		if got.Class != tc.want {
			t.Errorf("Classify(%q) = %s (pattern %q), want %s", tc.text, got.Class, got.Pattern, tc.want)
		}
		if !strings.Contains(got.Pattern, "family") {
			t.Errorf("Classify(%q) matched %q, not a family: pick a text no specific pattern claims", tc.text, got.Pattern)
		}
	}
}

// docs/spec.md 2.8 (the veto): a family word never overrides a sign that
// the request, the key or the account is at fault: such a text stops the agent as before, however
// busy or transient it also sounds.
func TestFamilies_FatalEvidenceVetoes(t *testing.T) {
	for _, text := range []string{
		"The server is temporarily unable to serve requests for this API key: key revoked",        // revoked key
		"403 Forbidden <!DOCTYPE html><title>403</title>",                                         // a 4xx page
		"Your account has been suspended for abuse. Please upgrade to a paid plan to continue.",   // a ban, not a plan limit
		"Request blocked by our safety policy; please try again later with a different prompt.",   // content policy
		"Bad request: stream must be a boolean, retry with a valid body",                          // a bad request worded with "retry"
		"Error: model 'qwen9:70b' not found, please wait for the download to finish and retry",    // not found
		"TLS: certificate signed by unknown authority (connection reset later)",                   // certificate
		"The image exceeds the maximum size of 5 MB; the request timed out while uploading it",    // one part too large
		"Unsupported value: 'reasoning' does not support 'minimal' with this model. Retry later.", // unsupported parameter
		// "too many" of something the request carries, not of requests
		"Too many tools provided: maximum is 128",
		"too many stop sequences",
		"Too many images in the request",
		// another request is asked for, not a wait
		"The server could not understand the request; please try again with a different prompt.",
		"Gateway error: model gpt-4-foo is not configured on this gateway",
	} {
		if got := Classify(Outcome{StopReason: "error", ErrorMessage: text}); got.Class.Retryable() {
			t.Errorf("Classify(%q) = %s (pattern %q): a fatal error would be retried", text, got.Class, got.Pattern)
		}
	}
}

// docs/spec.md 2.8: the overflow family leaves alone what compaction cannot fix: an answer
// budget, a per-minute token throttle, one oversized part.
func TestFamilies_OverflowFamilyVeto(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Class
	}{
		{"max_new_tokens exceeds the model's context window of 8192", ClassFatal},
		{"Input tokens per minute exceeded the limit of 40000 for this model; please slow down", ClassRetryable},
		{"the image in message 3 is larger than the maximum of 20 MB", ClassFatal},
		// the specific wording "too many tokens", per minute: a throttle
		{"Too many tokens per minute, please slow down", ClassRetryable},
	} {
		if got := Classify(Outcome{StopReason: "error", ErrorMessage: tc.text}); got.Class != tc.want {
			t.Errorf("Classify(%q) = %s (pattern %q), want %s", tc.text, got.Class, got.Pattern, tc.want)
		}
	}
}

// A text that matches nothing at all is still fatal (docs/spec.md 2.1: retry only
// what matches the retryable set): the families widen the set, they do
// not turn the default around.
func TestFamilies_UnknownTextStaysFatal(t *testing.T) {
	for _, text := range []string{
		"something went wrong",
		"Error: tool schema for 'edit' has 3 problems",
		"unexpected response from model",
	} {
		if got := Classify(Outcome{StopReason: "error", ErrorMessage: text}); got.Class != ClassFatal {
			t.Errorf("Classify(%q) = %s (pattern %q), want fatal", text, got.Class, got.Pattern)
		}
	}
}

// docs/spec.md 2.8: a long error body (an HTML page, a stack trace) is read at its start
// and its end only (MaxClassifiedBytes): the status line and the final
// "Caused by" count, the middle does not, and classifying it stays cheap.
func TestClassify_ReadsTheHeadAndTailOfALongText(t *testing.T) {
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 4000) // ~108 KB
	for _, tc := range []struct {
		name, text string
		want       Class
	}{
		{"status line first", "503 Service Unavailable\n" + filler, ClassRetryable},
		{"cause last", filler + "\nCaused by: prompt is too long: 213462 tokens > 200000 maximum", ClassContextOverflow},
		{"middle ignored", filler[:50000] + " overloaded " + filler[:50000], ClassFatal},
	} {
		if got := Classify(Outcome{StopReason: "error", ErrorMessage: tc.text}); got.Class != tc.want {
			t.Errorf("%s: Classify = %s (%q), want %s", tc.name, got.Class, got.Pattern, tc.want)
		}
	}
}
