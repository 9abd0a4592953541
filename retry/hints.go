package retry

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// MaxHintMs bounds a believable retry hint. A week covers the longest
// usage-limit windows providers announce (weekly plan limits); anything
// longer is taken as garbage rather than as an instruction to wait.
const MaxHintMs int64 = 7 * 24 * 60 * 60 * 1000

// epochThresholdSec separates the two meanings of x-ratelimit-reset: a
// value above it (2001-09-09 in Unix seconds) is an absolute epoch, below
// it a number of seconds to wait. No provider asks for a 30-year wait.
const epochThresholdSec = 1e9

// httpDateLayout is the IMF-fixdate of RFC 9110 (the Retry-After date).
// "GMT" is literal text in a Go layout, so the result is in UTC.
const httpDateLayout = "Mon, 2 Jan 2006 15:04:05 GMT"

// Building blocks of the hint regexps. A hint name may be followed by a
// closing quote (JSON-ish bodies such as {"retry-after-ms": "1500"}).
const (
	hintSep = `"?\s*[:=]\s*"?`
	// hintEnd closes a value: a following letter or digit ("12abc",
	// "1.5x", "1.5.3") makes it garbage; one sentence-ending dot is fine.
	hintEnd = `\.?(?:[^\w.]|$)`
	// hintNum is a non-negative decimal.
	hintNum = `(\d{1,15}(?:\.\d+)?)` + hintEnd
	// hintDuration is a Go-style duration: "1s", "6m0s", "20ms", "1.5h".
	hintDuration = `((?:\d{1,15}(?:\.\d+)?(?:ms|s|m|h))+)` + hintEnd
	hintDate     = `([a-z]{3},\s+\d{1,2}\s+[a-z]{3}\s+\d{4}\s+\d{2}:\d{2}:\d{2}\s+gmt)`
)

// hintForm is one way a provider names its hint: a response header
// (ParseRetryHintHeaders; "" for a form only texts have) and the form in
// an error text (ParseRetryHint), with the parser of its value.
type hintForm struct {
	header string
	re     *regexp.Regexp
	parse  func(v string, now time.Time) (float64, bool)
}

func form(header, name, value string, parse func(string, time.Time) (float64, bool)) hintForm {
	return hintForm{header: header, re: regexp.MustCompile(`(?i)\b` + name + hintSep + value), parse: parse}
}

// hintForms in the order they are tried: the first valid one wins. A
// header may have several (retry-after: seconds, or an HTTP date).
var hintForms = []hintForm{
	form("retry-after-ms", `retry-after-ms`, hintNum, millisValue),
	form("retry-after", `retry-after`, hintNum, secondsValue),
	form("retry-after", `retry-after`, hintDate, httpDateValue),
	form("x-ratelimit-reset-ms", `x-ratelimit-reset-ms`, hintNum, millisValue),
	form("x-ratelimit-reset", `x-ratelimit-reset`, hintNum, resetValue),
	form("", `x-ratelimit-reset(?:-requests|-tokens)?`, hintDuration, durationValue),
	form("", `retry_?delay`, hintDuration, durationValue), // Gemini's RetryInfo: "retryDelay": "37s"
}

var (
	// Prose: "Please try again in 20s", "Please retry in 3.5s",
	// "retry after 30 seconds", "try again in ~1 hour 5 minutes".
	reProse = regexp.MustCompile(`(?i)\b(?:try again|retry)\s+(?:in|after)\s+(?:about\s+|approximately\s+|~\s*)?`)
	// reProsePart reads one "<number><unit>" of a prose duration.
	reProsePart = regexp.MustCompile(`(?i)^(?:\s*,?\s*(?:and\s+)?)(\d{1,15}(?:\.\d+)?)\s*([a-z]+)`)
)

// proseUnits maps the unit words of prose hints to milliseconds.
var proseUnits = map[string]float64{
	"ms": 1, "msec": 1, "msecs": 1, "millisecond": 1, "milliseconds": 1,
	"s": 1e3, "sec": 1e3, "secs": 1e3, "second": 1e3, "seconds": 1e3,
	"m": 60e3, "min": 60e3, "mins": 60e3, "minute": 60e3, "minutes": 60e3,
	"h": 3600e3, "hr": 3600e3, "hrs": 3600e3, "hour": 3600e3, "hours": 3600e3,
}

// ParseRetryHint finds a provider's "wait this long" hint in an error text
// and returns it in milliseconds. Recognised, in this order (the first
// valid one wins, matching is case-insensitive):
//
//   - retry-after-ms=N or retry-after-ms: N (milliseconds)
//   - retry-after: N (seconds, may be fractional)
//   - retry-after: <HTTP date> (relative to now)
//   - x-ratelimit-reset-ms: N (milliseconds)
//   - x-ratelimit-reset: N (seconds; above 1e9 a Unix epoch in seconds,
//     relative to now)
//   - x-ratelimit-reset[-requests|-tokens]: 6m0s (a Go-style duration)
//   - retryDelay: "37s" (Gemini)
//   - prose: "try again in 20s", "Please retry in 3.5s",
//     "retry after 30 seconds", "try again in 1 hour 5 minutes"
//
// The date and epoch forms need a clock; when now is the zero time they are
// skipped. Negative waits (dates in the past), values above MaxHintMs and
// malformed values are rejected: the form is ignored and the next one
// tried. Fractions of a millisecond round up, so a caller honouring the
// hint never retries early.
func ParseRetryHint(text string, now time.Time) (ms int64, ok bool) {
	if text == "" {
		return 0, false
	}
	for _, f := range hintForms {
		if m := f.re.FindStringSubmatch(text); m != nil {
			if ms, ok := hintMs(f.parse(m[1], now)); ok {
				return ms, true
			}
		}
	}
	return hintMs(prose(text))
}

// outcomeHint is the retry hint of an outcome: the provider's structured
// one (Outcome.RetryAfterMs) when it is valid, else the one in the error
// text (ParseRetryHint; sessions written before the structured field, and
// hints only a body or a message carries). Both pass the same bound.
func outcomeHint(o Outcome, now time.Time) (int64, bool) {
	if o.RetryAfterMs != nil {
		if ms, ok := hintMs(float64(*o.RetryAfterMs), true); ok {
			return ms, true
		}
	}
	return ParseRetryHint(o.ErrorMessage, now)
}

// hintMs validates a wait in (fractional) milliseconds, if there is one
// (ok).
func hintMs(v float64, ok bool) (int64, bool) {
	if !ok || math.IsNaN(v) || v < 0 || v > float64(MaxHintMs) {
		return 0, false
	}
	return int64(math.Ceil(v)), true
}

// The value parsers below read one hint value, from the text or from a
// header, into (fractional) milliseconds; hintMs then validates it.

// reDecimal is a plain non-negative decimal, as hint values are written.
var reDecimal = regexp.MustCompile(`^\d{1,15}(?:\.\d+)?$`)

// scaledValue reads a plain decimal and multiplies it into milliseconds.
func scaledValue(v string, factor float64) (float64, bool) {
	v = strings.TrimSpace(v)
	if !reDecimal.MatchString(v) {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false
	}
	return f * factor, true
}

// httpDateValue reads an HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT") as
// the wait from now; without a clock it is no hint.
func httpDateValue(v string, now time.Time) (float64, bool) {
	// Collapse runs of spaces and fold case: Go matches day and month
	// names case-insensitively but the literal "GMT" exactly.
	return timeValue(httpDateLayout, strings.ToUpper(strings.Join(strings.Fields(v), " ")), now)
}

// resetValue reads x-ratelimit-reset: seconds, or above epochThresholdSec
// a Unix epoch in seconds (relative to now; without a clock no hint).
func resetValue(v string, now time.Time) (float64, bool) {
	sec, ok := scaledValue(v, 1)
	if !ok {
		return 0, false
	}
	if sec <= epochThresholdSec {
		return sec * 1000, true
	}
	if now.IsZero() {
		return 0, false
	}
	return sec*1000 - float64(now.UnixMilli()), true
}

// millisValue and secondsValue read a plain decimal of milliseconds or
// of seconds.
func millisValue(v string, _ time.Time) (float64, bool)  { return scaledValue(v, 1) }
func secondsValue(v string, _ time.Time) (float64, bool) { return scaledValue(v, 1000) }

// durationValue reads a Go-style duration such as "6m0s", or plain
// seconds (the per-limit reset headers send either).
func durationValue(v string, _ time.Time) (float64, bool) {
	d, err := time.ParseDuration(strings.ToLower(strings.TrimSpace(v)))
	if err != nil {
		return scaledValue(v, 1000)
	}
	return float64(d) / float64(time.Millisecond), true
}

// timeValue reads v in layout as the wait from now in milliseconds;
// without a clock it is no hint.
func timeValue(layout, v string, now time.Time) (float64, bool) {
	at, err := time.Parse(layout, v)
	if now.IsZero() || err != nil {
		return 0, false
	}
	return float64(at.Sub(now)) / float64(time.Millisecond), true
}

// Per-limit reset headers: when no general hint was sent, the longest of
// them is the wait. x-ratelimit-reset-* (OpenAI, Groq) are Go-style
// durations such as "6m0s" (or seconds); anthropic-ratelimit-*-reset are
// RFC 3339 times.
var (
	resetDurationHeaders = []string{"x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"}
	resetTimeHeaders     = []string{"anthropic-ratelimit-requests-reset", "anthropic-ratelimit-tokens-reset",
		"anthropic-ratelimit-input-tokens-reset", "anthropic-ratelimit-output-tokens-reset"}
)

// ParseRetryHintHeaders reads the wait a provider asked for from its
// response headers (header returns a header's value, "" when absent:
// http.Header.Get). Tried in this order, the first valid one wins:
//
//   - retry-after-ms (milliseconds)
//   - retry-after (seconds, or an HTTP date relative to now)
//   - x-ratelimit-reset-ms (milliseconds)
//   - x-ratelimit-reset (seconds; above 1e9 a Unix epoch relative to now)
//   - the longest valid per-limit reset: x-ratelimit-reset-requests /
//     -tokens (durations or seconds), anthropic-ratelimit-*-reset (RFC 3339
//     times relative to now)
//
// Values are validated like ParseRetryHint's (the same value parsers and
// the same MaxHintMs bound): negative, absurd and malformed ones are
// skipped. Providers put the result in agent.Message.RetryAfterMs, which
// Classify prefers to a hint in the text.
func ParseRetryHintHeaders(header func(name string) string, now time.Time) (ms int64, ok bool) {
	if header == nil {
		return 0, false
	}
	for _, f := range hintForms {
		if f.header == "" || strings.TrimSpace(header(f.header)) == "" {
			continue
		}
		if ms, ok := hintMs(f.parse(header(f.header), now)); ok {
			return ms, true
		}
	}
	best, found := int64(0), false
	consider := func(raw float64, parsed bool) {
		if ms, valid := hintMs(raw, parsed); valid && (!found || ms > best) {
			best, found = ms, true
		}
	}
	for _, name := range resetDurationHeaders {
		consider(durationValue(header(name), now))
	}
	for _, name := range resetTimeHeaders {
		consider(timeValue(time.RFC3339, strings.TrimSpace(header(name)), now))
	}
	return best, found
}

// prose reads "try again in 1m30s" / "retry after 30 seconds". A number
// without a known unit is not a hint: "retry after 30" could mean anything.
func prose(text string) (float64, bool) {
	for _, loc := range reProse.FindAllStringIndex(text, -1) {
		rest := text[loc[1]:]
		total, parts := 0.0, 0
		for {
			m := reProsePart.FindStringSubmatchIndex(rest)
			if m == nil {
				break
			}
			unit, known := proseUnits[strings.ToLower(rest[m[4]:m[5]])]
			if !known {
				break
			}
			v, err := strconv.ParseFloat(rest[m[2]:m[3]], 64)
			if err != nil {
				break
			}
			total += v * unit
			parts++
			rest = rest[m[1]:]
		}
		if parts > 0 {
			return total, true
		}
	}
	return 0, false
}
