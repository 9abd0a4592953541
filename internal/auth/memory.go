// Package auth holds the credentials of model providers on the worker.
// Secrets stay here: everything that leaves the package towards Temporal
// carries credential ids only.
package auth

import (
	"fmt"
	"hash/fnv"
	"sync"
	"time"
)

// Credential is one API key or token of a provider.
type Credential struct {
	ID       string
	Provider string
	Secret   string
}

// Memory is an in-memory credential store: several credentials per
// provider, a session keeps its credential (stable hash of the session id)
// until that credential hits its usage limit. Blocks are not persisted.
type Memory struct {
	mu       sync.Mutex
	creds    map[string][]Credential
	blocked  map[string]time.Time // credential id -> until
	assigned map[string]string    // provider/session -> credential id
	now      func() time.Time
}

// NewMemory returns a store holding creds.
func NewMemory(creds ...Credential) *Memory {
	m := &Memory{
		creds:    map[string][]Credential{},
		blocked:  map[string]time.Time{},
		assigned: map[string]string{},
		now:      time.Now,
	}
	for _, c := range creds {
		m.creds[c.Provider] = append(m.creds[c.Provider], c)
	}
	return m
}

// Select returns the credential of the session for provider; ok is false
// when the provider has no credential at all (a provider that needs none,
// such as the scripted one, then runs without).
func (m *Memory) Select(provider, sessionID string) (Credential, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.selectLocked(provider, sessionID)
}

func (m *Memory) selectLocked(provider, sessionID string) (Credential, bool) {
	list := m.creds[provider]
	if len(list) == 0 {
		return Credential{}, false
	}
	key := provider + "/" + sessionID
	if id, ok := m.assigned[key]; ok {
		for _, c := range list {
			if c.ID == id && !m.isBlocked(id) {
				return c, true
			}
		}
	}
	start := int(stableHash(sessionID) % uint32(len(list)))
	for i := range list {
		c := list[(start+i)%len(list)]
		if !m.isBlocked(c.ID) {
			m.assigned[key] = c.ID
			return c, true
		}
	}
	// Every credential is blocked: keep the hashed one.
	return list[start], true
}

func (m *Memory) isBlocked(id string) bool {
	until, ok := m.blocked[id]
	return ok && m.now().Before(until)
}

// MarkUsageLimitReached blocks the session's current credential for
// retryAfterMs and reports whether another unblocked credential of the
// provider exists (the session is then switched to it).
func (m *Memory) MarkUsageLimitReached(provider, sessionID string, retryAfterMs int64) (switched bool, credentialID string, err error) {
	if retryAfterMs < 0 {
		return false, "", fmt.Errorf("mark usage limit: negative retryAfterMs %d", retryAfterMs)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.selectLocked(provider, sessionID)
	if !ok {
		return false, "", nil
	}
	m.blocked[cur.ID] = m.now().Add(time.Duration(retryAfterMs) * time.Millisecond)
	delete(m.assigned, provider+"/"+sessionID)
	next, ok := m.selectLocked(provider, sessionID)
	if !ok || next.ID == cur.ID || m.isBlocked(next.ID) {
		return false, "", nil
	}
	return true, next.ID, nil
}

func stableHash(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}
