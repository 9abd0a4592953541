package auth

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"
)

// Kinds of credential. Both are opaque secrets sent as the provider's
// bearer credential; the kind is shown by `starter auth list` only.
const (
	KindAPIKey = "api_key"
	KindOAuth  = "oauth"
)

// DefaultBlockMs is how long a credential stays blocked after a usage
// limit whose error carried no retry hint.
const DefaultBlockMs int64 = 60_000

// EnvVars name, per provider, the environment variable whose value is the
// implicit credential "env:<provider>" when the store has none for it.
var EnvVars = map[string]string{
	"anthropic": "ANTHROPIC_API_KEY",
	"openai":    "OPENAI_API_KEY",
}

// Credential is one API key or token of a provider.
type Credential struct {
	ID       string `json:"id"`
	Provider string `json:"provider"`
	// Kind is KindAPIKey (the default) or KindOAuth.
	Kind   string `json:"kind,omitempty"`
	Secret string `json:"secret"`
	// Added is when `starter auth add` stored it.
	Added time.Time `json:"added,omitempty"`
}

// Switch is the outcome of a usage-limit report: whether the session now
// runs on another credential or, with no credential left, another model.
type Switch struct {
	Switched     bool   `json:"switched"`
	CredentialID string `json:"credentialId,omitempty"`
	// Model is the fallback model the session switched to ("" when the
	// switch was to another credential, or there was none).
	Model string `json:"model,omitempty"`
}

// ValidateID accepts ids of letters, digits and ".-_:" (1-64 bytes): they
// are shown in lists and logs and travel through Temporal.
func ValidateID(id string) error {
	if id == "" || len(id) > 64 {
		return fmt.Errorf("credential id %q: want 1-64 characters", id)
	}
	if strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:") != "" {
		return fmt.Errorf("credential id %q: only letters, digits and . - _ : are allowed", id)
	}
	return nil
}

// state is the selection and blocking logic of File: plain data, so
// File can persist it as it is. File.read makes each one (init).
type state struct {
	Credentials []Credential `json:"credentials"`
	// Blocks maps credential id to the end of its block.
	Blocks map[string]time.Time `json:"blocks,omitempty"`
	// Sessions maps "provider/session" to the credential id the session
	// runs on, so a session keeps its credential once switched.
	Sessions map[string]string `json:"sessions,omitempty"`
	// Windows maps WindowKey(provider, credential) to the credential's
	// rate-limit window (window.go).
	Windows map[string]Window `json:"windows,omitempty"`
}

func (s *state) init() {
	if s.Blocks == nil {
		s.Blocks = map[string]time.Time{}
	}
	if s.Sessions == nil {
		s.Sessions = map[string]string{}
	}
	if s.Windows == nil {
		s.Windows = map[string]Window{}
	}
}

// of returns the provider's credentials in store order, or the implicit
// environment credential when the store has none.
func (s *state) of(provider string, env func(string) (string, bool)) []Credential {
	var out []Credential
	for _, c := range s.Credentials {
		if c.Provider == provider {
			out = append(out, c)
		}
	}
	if name, ok := EnvVars[provider]; ok && len(out) == 0 {
		if v, ok := env(name); ok && strings.TrimSpace(v) != "" {
			out = append(out, Credential{ID: "env:" + provider, Provider: provider, Kind: KindAPIKey, Secret: strings.TrimSpace(v)})
		}
	}
	return out
}

// secrets returns the secret of every stored credential and of every
// implicit environment credential, whether or not the
// store's own credentials override the latter.
func (s *state) secrets(env func(string) (string, bool)) []string {
	var out []string
	for _, c := range s.Credentials {
		out = append(out, c.Secret)
	}
	for _, name := range slices.Sorted(maps.Values(EnvVars)) {
		if v, ok := env(name); ok && strings.TrimSpace(v) != "" {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

func (s *state) blocked(id string, now time.Time) bool {
	until, ok := s.Blocks[id]
	return ok && now.Before(until)
}

// selectCred returns the session's credential: the one it was assigned if
// that is not blocked, else the first unblocked one from a stable hash of
// the session id, else (everything blocked) the hashed one. changed says
// whether the assignment moved.
func (s *state) selectCred(provider, sessionID string, now time.Time, env func(string) (string, bool)) (c Credential, ok, changed bool) {
	list := s.of(provider, env)
	if len(list) == 0 {
		return Credential{}, false, false
	}
	key := provider + "/" + sessionID
	if id, assigned := s.Sessions[key]; assigned {
		for _, c := range list {
			if c.ID == id && !s.blocked(id, now) {
				return c, true, false
			}
		}
	}
	h := fnv.New32a() // a stable hash of the session id
	_, _ = h.Write([]byte(sessionID))
	start := int(h.Sum32() % uint32(len(list)))
	for i := range list {
		c := list[(start+i)%len(list)]
		if !s.blocked(c.ID, now) {
			changed = s.Sessions[key] != c.ID
			s.Sessions[key] = c.ID
			return c, true, changed
		}
	}
	return list[start], true, false
}

// markUsageLimit blocks the session's current credential for blockMs and
// moves the session to another unblocked credential of the provider; with
// none left it moves the session's model to the next of fallback (the
// models to try in order for this provider).
func (s *state) markUsageLimit(provider, model, sessionID string, blockMs int64, fallback []string, now time.Time, env func(string) (string, bool)) (Switch, error) {
	if blockMs < 0 {
		return Switch{}, fmt.Errorf("mark usage limit: negative retryAfterMs %d", blockMs)
	}
	cur, ok, _ := s.selectCred(provider, sessionID, now, env)
	if ok {
		s.Blocks[cur.ID] = now.Add(time.Duration(cmp.Or(blockMs, DefaultBlockMs)) * time.Millisecond)
		delete(s.Sessions, provider+"/"+sessionID)
		if next, ok, _ := s.selectCred(provider, sessionID, now, env); ok && next.ID != cur.ID && !s.blocked(next.ID, now) {
			return Switch{Switched: true, CredentialID: next.ID}, nil
		}
	}
	if m := nextModel(fallback, model); m != "" {
		return Switch{Switched: true, Model: m}, nil
	}
	return Switch{}, nil
}

// nextModel is the fallback after current: the one following it in the
// list, or the first one when current is not in it ("" when none).
func nextModel(list []string, current string) string {
	if i := slices.Index(list, current); i+1 < len(list) {
		return list[i+1]
	}
	return ""
}

// prune drops expired blocks, assignments to credentials that are gone
// and stale windows.
func (s *state) prune(now time.Time) {
	ids := map[string]bool{}
	for _, c := range s.Credentials {
		ids[c.ID] = true
	}
	maps.DeleteFunc(s.Blocks, func(_ string, until time.Time) bool { return !now.Before(until) })
	maps.DeleteFunc(s.Sessions, func(_, id string) bool { return !ids[id] && !strings.HasPrefix(id, "env:") })
	maps.DeleteFunc(s.Windows, func(_ string, w Window) bool { return w.Stale(now) })
}

// Entry describes a credential without its secret (`starter auth list`).
type Entry struct {
	ID       string    `json:"id"`
	Provider string    `json:"provider"`
	Kind     string    `json:"kind"`
	Added    time.Time `json:"added,omitzero"`
	// Implicit marks the environment credential.
	Implicit bool `json:"implicit,omitempty"`
	// BlockedUntil is set while a usage limit blocks it.
	BlockedUntil time.Time `json:"blockedUntil,omitzero"`
	// RateLimitedUntil is set while a rate-limit window holds its calls
	// (window.go).
	RateLimitedUntil time.Time `json:"rateLimitedUntil,omitzero"`
	// Sessions counts the sessions assigned to it.
	Sessions int `json:"sessions"`
	// WindowOnly marks a credential this store does not hold, known only
	// from its open rate-limit window: one in another worker's auth.json
	// whose windows are shared through PostgreSQL, or a provider called
	// without a credential (ID "-", such as a local server).
	WindowOnly bool `json:"windowOnly,omitempty"`
}

// entries lists every credential, the implicit ones of env included,
// without their rate-limit windows (WithWindows adds them).
func (s *state) entries(now time.Time, env func(string) (string, bool)) []Entry {
	providers := map[string]bool{}
	for _, c := range s.Credentials {
		providers[c.Provider] = true
	}
	for p := range EnvVars {
		providers[p] = true
	}
	var out []Entry
	for _, p := range slices.Sorted(maps.Keys(providers)) {
		for _, c := range s.of(p, env) {
			e := Entry{ID: c.ID, Provider: c.Provider, Kind: cmp.Or(c.Kind, KindAPIKey), Added: c.Added, Implicit: strings.HasPrefix(c.ID, "env:")}
			if s.blocked(c.ID, now) {
				e.BlockedUntil = s.Blocks[c.ID]
			}
			for key, id := range s.Sessions {
				if id == c.ID && strings.HasPrefix(key, p+"/") {
					e.Sessions++
				}
			}
			out = append(out, e)
		}
	}
	return out
}

// WithWindows is entries with the rate-limit windows open at now (the
// clock of the store that keeps them): each credential's RateLimitedUntil
// is its window's end, and a window open for a credential not among
// entries is listed as a WindowOnly entry of its own (in key order), so
// a listing shows every limit the workers hold calls for.
func WithWindows(entries []Entry, windows map[string]Window, now time.Time) []Entry {
	out := make([]Entry, 0, len(entries))
	listed := map[string]bool{}
	for _, e := range entries {
		key := WindowKey(e.Provider, e.ID)
		listed[key] = true
		e.RateLimitedUntil = time.Time{}
		if w, ok := windows[key]; ok && now.Before(w.Until) {
			e.RateLimitedUntil = w.Until
		}
		out = append(out, e)
	}
	for _, key := range slices.Sorted(maps.Keys(windows)) {
		if w := windows[key]; !listed[key] && now.Before(w.Until) {
			provider, id, _ := strings.Cut(key, "/")
			out = append(out, Entry{ID: id, Provider: provider, RateLimitedUntil: w.Until, WindowOnly: true})
		}
	}
	return out
}
