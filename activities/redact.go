package activities

import (
	"regexp"
	"strings"
	"unicode"
)

// redacted stands where a secret was.
const redacted = "[redacted]"

// Shapes of secrets that providers and proxies echo in error texts. Each
// pattern's group 1 is the part that is masked.
var (
	// providerKey: the key prefixes of Anthropic (sk-ant-), OpenAI (sk-,
	// sk-proj-), OpenRouter (sk-or-), Groq (gsk_), Google (AIza) and xAI
	// (xai-). The family prefix stays visible (it tells whose key it was);
	// the rest, at least 12 characters, is masked. Words such as
	// "skip-list" or "task-123" do not start with a prefix at a word
	// boundary, and "sk-xxxxxx" or an already masked "sk-PMafP***" is too
	// short.
	providerKey = regexp.MustCompile(`\b(?:sk-|sk_|gsk_|xai-|AIza)([A-Za-z0-9_-]{12,})`)
	// bearerToken: the credential of an Authorization header.
	bearerToken = regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/=-]+)`)
	// keyParam: the value of api_key=, key=, x-api-key: (query strings,
	// header dumps, JSON fields).
	keyParam = regexp.MustCompile(`(?i)key["']?\s*[=:]\s*["']?([A-Za-z0-9._~+/-]+)`)
	// enclosedToken: a token alone between backticks, brackets or
	// parentheses, as error texts quote a key.
	enclosedToken = regexp.MustCompile("[`\\[(]([A-Za-z0-9_-]{16,})[`\\])]")
)

// Redact removes a secret, and anything shaped like a provider key or a
// bearer token, from text that is about to leave the activity (provider
// errors echo keys: "Incorrect API key provided: sk-…"). A secret shorter
// than 8 characters is not replaced by itself: it would match ordinary
// text. Redacting redacted text changes nothing.
func Redact(text, secret string) string {
	if text == "" {
		return text
	}
	if len(secret) >= 8 {
		text = strings.ReplaceAll(text, secret, redacted)
	}
	text = maskGroup(providerKey, text, func(string) bool { return true })
	text = maskGroup(bearerToken, text, opaque)
	text = maskGroup(keyParam, text, opaque)
	return maskGroup(enclosedToken, text, random)
}

// maskGroup replaces group 1 of every match of re with the redaction
// marker where secretLike says the group is a secret.
func maskGroup(re *regexp.Regexp, text string, secretLike func(string) bool) string {
	matches := re.FindAllStringSubmatchIndex(text, -1)
	if matches == nil {
		return text
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		start, end := m[2], m[3]
		if start < 0 || !secretLike(text[start:end]) {
			continue
		}
		b.WriteString(text[last:start])
		b.WriteString(redacted)
		last = end
	}
	b.WriteString(text[last:])
	return b.String()
}

// opaque says whether the value of a bearer header or key parameter is a
// credential rather than a word: letters and digits mixed, or too long
// for a word ("Bearer undefined" and "key: invalid" stay readable).
func opaque(v string) bool {
	if len(v) < 8 {
		return false
	}
	return len(v) >= 32 || strings.ContainsFunc(v, unicode.IsDigit) && strings.ContainsFunc(v, unicode.IsLetter)
}

// random says whether a quoted token looks generated rather than named: a
// run of 16 or more letters and digits mixing upper case, lower case and
// digits. Model names ("claude-3-5-sonnet-20241022", "gpt-4o-mini") have
// no such run; keys do.
func random(v string) bool {
	for _, run := range strings.FieldsFunc(v, func(r rune) bool { return r == '-' || r == '_' }) {
		if len(run) >= 16 && strings.ContainsFunc(run, unicode.IsUpper) &&
			strings.ContainsFunc(run, unicode.IsLower) && strings.ContainsFunc(run, unicode.IsDigit) {
			return true
		}
	}
	return false
}
