package activities

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/tools"
)

// redacted stands where a secret was.
const redacted = tools.Masked

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

// Redact removes anything shaped like a provider key or a bearer token
// from text that is about to leave the activity (provider errors echo
// keys: "Incorrect API key provided: sk-…"); a known secret is masked by
// RedactMessage. Redacting redacted text changes nothing.
func Redact(text string) string {
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

// RedactMessage masks secrets in every provider-supplied string of an
// assistant message before it is stored or reported: ErrorMessage,
// ErrorType, the Text of every content block (text and thinking) and the
// Arguments of every tool call. Besides what Redact masks, it masks the
// secret in its base64 (standard and URL alphabets, padded or not, alone
// or inside a longer encoded value such as "Basic base64(user:key)") and
// URL-encoded (url.QueryEscape, url.PathEscape) forms, and the credential
// of any "Basic" authorization. Tool-call arguments stay valid JSON: only
// the contents of their strings change. Ids, tool names, the provider and
// the model are left alone: a mangled tool-call id would break the
// conversation.
func RedactMessage(m *agent.Message, secret string) {
	if m == nil {
		return
	}
	r := newMessageRedactor(secret)
	m.ErrorMessage = r.text(m.ErrorMessage)
	m.ErrorType = r.text(m.ErrorType)
	for i := range m.Content {
		b := &m.Content[i]
		b.Text = r.text(b.Text)
		if b.ToolCall != nil && len(b.ToolCall.Arguments) > 0 {
			if args := r.json(b.ToolCall.Arguments); !bytes.Equal(args, b.ToolCall.Arguments) {
				// Copy: the arguments may share memory with the caller.
				tc := *b.ToolCall
				tc.Arguments = args
				b.ToolCall = &tc
			}
		}
	}
}

// basicAuth: the credential of a Basic authorization, base64 of
// "user:password".
var basicAuth = regexp.MustCompile(`(?i)\bbasic\s+([A-Za-z0-9+/_-]{4,}={0,2})`)

// messageRedactor masks secrets and their encodings.
type messageRedactor struct {
	// secrets are the values masked (each at least tools.MinSecretLen
	// long, without duplicates).
	secrets []string
	// escaped holds the URL-encoded forms of the secrets that differ from
	// them.
	escaped []string
	// b64 holds, per alphabet, the base64 text that encodes a secret at
	// each of the three byte alignments, with the characters that also
	// depend on neighbouring bytes cut off: any base64 value whose decoded
	// bytes contain the secret contains one of them.
	b64 []b64Form
}

// b64Form is a base64 core of a secret and the symbols its alphabet has
// beside letters and digits.
type b64Form struct{ core, symbols string }

// in says whether c is a character of f's base64 text, padding included.
func (f b64Form) in(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte(f.symbols, c) >= 0
}

// newMessageRedactor returns the redactor of secrets; a secret shorter
// than tools.MinSecretLen is left out: it would match ordinary text.
func newMessageRedactor(secrets ...string) *messageRedactor {
	r := &messageRedactor{}
	for _, secret := range secrets {
		if len(secret) < tools.MinSecretLen || slices.Contains(r.secrets, secret) {
			continue
		}
		r.secrets = append(r.secrets, secret)
		r.addForms(secret)
	}
	return r
}

// addForms adds the URL-encoded and base64 forms of secret.
func (r *messageRedactor) addForms(secret string) {
	for _, e := range []string{url.QueryEscape(secret), url.PathEscape(secret)} {
		// Some encoders write the hex digits of %XX escapes in lower case.
		for _, form := range []string{e, urlEscape.ReplaceAllStringFunc(e, strings.ToLower)} {
			if form != secret && !slices.Contains(r.escaped, form) {
				r.escaped = append(r.escaped, form)
			}
		}
	}
	for _, enc := range []struct {
		*base64.Encoding
		symbols string
	}{{base64.RawStdEncoding, "+/="}, {base64.RawURLEncoding, "-_="}} {
		for shift := 0; shift < 3; shift++ {
			text := enc.EncodeToString(append(make([]byte, shift), secret...))
			// Character k holds bits 6k to 6k+6 of the encoded bytes; keep
			// those that hold secret bits only.
			start := (8*shift + 5) / 6
			end := 8 * (shift + len(secret)) / 6
			core := text[start:end]
			if !slices.ContainsFunc(r.b64, func(f b64Form) bool { return f.core == core }) {
				r.b64 = append(r.b64, b64Form{core, enc.symbols})
			}
		}
	}
}

// urlEscape is a %XX escape.
var urlEscape = regexp.MustCompile(`%[0-9A-F]{2}`)

// text masks the secrets, their encodings (known), key-shaped tokens
// (Redact) and Basic credentials in s.
func (r *messageRedactor) text(s string) string {
	return maskGroup(basicAuth, Redact(r.known(s)), r.basicCredential)
}

// known masks the secrets and their encodings in s, and nothing else:
// key-shaped text that is no secret of the worker's stays, so a file the
// model reads can still be edited word for word.
func (r *messageRedactor) known(s string) string {
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, redacted)
	}
	for _, e := range r.escaped {
		s = strings.ReplaceAll(s, e, redacted)
	}
	for _, f := range r.b64 {
		s = maskB64(s, f)
	}
	return s
}

// maskB64 replaces every base64 value (a run of the alphabet's
// characters) that contains f.core.
func maskB64(s string, f b64Form) string {
	var b strings.Builder
	last := 0
	for {
		i := strings.Index(s[last:], f.core)
		if i < 0 {
			break
		}
		start, end := last+i, last+i+len(f.core)
		for start > last && f.in(s[start-1]) {
			start--
		}
		for end < len(s) && f.in(s[end]) {
			end++
		}
		b.WriteString(s[last:start])
		b.WriteString(redacted)
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// basicCredential says whether the token after "Basic" is a credential:
// base64 of the secret, or of "user:password" text.
func (r *messageRedactor) basicCredential(token string) bool {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		dec, err := enc.DecodeString(token)
		if err != nil {
			continue
		}
		for _, secret := range r.secrets {
			if bytes.Contains(dec, []byte(secret)) {
				return true
			}
		}
		if bytes.IndexByte(dec, ':') >= 0 && utf8.Valid(dec) && !bytes.ContainsFunc(dec, unicode.IsControl) {
			return true
		}
	}
	return false
}

// json masks secrets inside the strings of a JSON text and leaves
// everything else byte for byte, so valid JSON stays valid. Text that is
// not JSON is masked as text.
func (r *messageRedactor) json(raw json.RawMessage) json.RawMessage {
	if !json.Valid(raw) {
		return json.RawMessage(r.text(string(raw)))
	}
	var out []byte
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // any valid number decodes: no token is lost to one
	last, prev := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		end := int(dec.InputOffset()) // just past the token
		if s, ok := tok.(string); ok {
			if red := r.text(s); red != s {
				// The literal starts at the first quote since the last
				// token (separators and spaces hold none).
				start := prev + bytes.IndexByte(raw[prev:end], '"')
				lit, _ := agent.MarshalPlain(red) // a string always encodes
				out = append(append(out, raw[last:start]...), lit...)
				last = end
			}
		}
		prev = end
	}
	if out == nil {
		return raw
	}
	return append(out, raw[last:]...)
}
