package auth

import (
	"sync"
	"time"
)

// Memory is an in-memory credential store with the File store's
// selection rules (state.go): several credentials per provider, a session
// keeps its credential (stable hash of the session id) until that
// credential hits its usage limit. Nothing is persisted; tests and the
// scripted demo use it.
type Memory struct {
	mu       sync.Mutex
	st       state
	fallback map[string][]string
	now      func() time.Time
}

// NewMemory returns a store holding creds.
func NewMemory(creds ...Credential) *Memory {
	m := &Memory{now: time.Now}
	m.st.Credentials = append(m.st.Credentials, creds...)
	m.st.init()
	return m
}

// SetFallbackModels sets, per provider, the models a session moves through
// when no credential is left (settings retry.fallbackModels).
func (m *Memory) SetFallbackModels(fallback map[string][]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fallback = fallback
}

// Select returns the credential of the session for provider; ok is false
// when the provider has no credential at all (a provider that needs none,
// such as the scripted one, then runs without).
func (m *Memory) Select(provider, sessionID string) (Credential, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok, _ := m.st.selectCred(provider, sessionID, m.now(), nil)
	return c, ok
}

// MarkUsageLimitReached blocks the session's current credential for
// retryAfterMs (0: DefaultBlockMs) and reports whether another unblocked
// credential of the provider exists (the session is then switched to it).
func (m *Memory) MarkUsageLimitReached(provider, sessionID string, retryAfterMs int64) (switched bool, credentialID string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sw, err := m.st.markUsageLimit(provider, "", sessionID, retryAfterMs, nil, m.now(), nil)
	return sw.Switched, sw.CredentialID, err
}

// MarkUsageLimit is MarkUsageLimitReached for a session running model: with
// no credential left it switches the session to the next fallback model.
func (m *Memory) MarkUsageLimit(provider, model, sessionID string, retryAfterMs int64) (Switch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.markUsageLimit(provider, model, sessionID, retryAfterMs, m.fallback[provider], m.now(), nil)
}

// Secrets returns the secret of every credential the store holds.
func (m *Memory) Secrets() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.secrets(nil)
}
