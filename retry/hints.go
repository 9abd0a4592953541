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

var (
	reRetryAfterMs     = regexp.MustCompile(`(?i)\bretry-after-ms` + hintSep + hintNum)
	reRetryAfterSec    = regexp.MustCompile(`(?i)\bretry-after` + hintSep + hintNum)
	reRetryAfterDate   = regexp.MustCompile(`(?i)\bretry-after` + hintSep + hintDate)
	reRateResetMs      = regexp.MustCompile(`(?i)\bx-ratelimit-reset-ms` + hintSep + hintNum)
	reRateReset        = regexp.MustCompile(`(?i)\bx-ratelimit-reset` + hintSep + hintNum)
	reRateResetKindDur = regexp.MustCompile(`(?i)\bx-ratelimit-reset(?:-requests|-tokens)?` + hintSep + hintDuration)
	// Gemini's RetryInfo detail: "retryDelay": "37s".
	reRetryDelay = regexp.MustCompile(`(?i)\bretry_?delay` + hintSep + hintDuration)
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
	parsers := []func(string, time.Time) (float64, bool){
		scaled(reRetryAfterMs, 1),
		scaled(reRetryAfterSec, 1000),
		retryAfterDate,
		scaled(reRateResetMs, 1),
		rateResetSeconds,
		duration(reRateResetKindDur),
		duration(reRetryDelay),
		prose,
	}
	for _, parse := range parsers {
		if v, found := parse(text, now); found {
			if ms, valid := hintMs(v); valid {
				return ms, true
			}
		}
	}
	return 0, false
}

// hintMs validates a wait in (fractional) milliseconds.
func hintMs(v float64) (int64, bool) {
	if math.IsNaN(v) || v < 0 || v > float64(MaxHintMs) {
		return 0, false
	}
	return int64(math.Ceil(v)), true
}

// scaled reads a plain number and multiplies it into milliseconds.
func scaled(re *regexp.Regexp, factor float64) func(string, time.Time) (float64, bool) {
	return func(text string, _ time.Time) (float64, bool) {
		m := re.FindStringSubmatch(text)
		if m == nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, false
		}
		return v * factor, true
	}
}

// retryAfterDate reads "retry-after: Wed, 21 Oct 2015 07:28:00 GMT".
func retryAfterDate(text string, now time.Time) (float64, bool) {
	if now.IsZero() {
		return 0, false
	}
	m := reRetryAfterDate.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	// Collapse runs of spaces and fold case: Go matches day and month
	// names case-insensitively but the literal "GMT" exactly.
	norm := strings.ToUpper(strings.Join(strings.Fields(m[1]), " "))
	at, err := time.Parse(httpDateLayout, norm)
	if err != nil {
		return 0, false
	}
	return float64(at.Sub(now)) / float64(time.Millisecond), true
}

// rateResetSeconds reads x-ratelimit-reset as seconds or as an epoch.
func rateResetSeconds(text string, now time.Time) (float64, bool) {
	sec, found := scaled(reRateReset, 1)(text, now)
	if !found {
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

// duration reads a Go-style duration such as "6m0s".
func duration(re *regexp.Regexp) func(string, time.Time) (float64, bool) {
	return func(text string, _ time.Time) (float64, bool) {
		m := re.FindStringSubmatch(text)
		if m == nil {
			return 0, false
		}
		d, err := time.ParseDuration(strings.ToLower(m[1]))
		if err != nil {
			return 0, false
		}
		return float64(d) / float64(time.Millisecond), true
	}
}

// prose reads "try again in 1m30s" / "retry after 30 seconds". A number
// without a known unit is not a hint: "retry after 30" could mean anything.
func prose(text string, _ time.Time) (float64, bool) {
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
