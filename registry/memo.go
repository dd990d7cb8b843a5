package registry

import (
	"encoding/json"
	"sync"
	"time"
)

// RuleChecker answers what the session's permission rules say of a call
// (package rules decides; the agent implements this). A tool that reaches
// further than its arguments name asks it again: web_fetch about each
// redirect hop, and whether the user's own rule names the host it may reach
// at a private address.
type RuleChecker interface {
	CheckRule(tool string, args json.RawMessage) RuleVerdict
}

// RuleVerdict is the rules' answer about one call.
type RuleVerdict struct {
	Effect string // "allow", "ask" or "deny"; "" when no rule speaks
	Rule   string // the deciding rule as a refusal names it: its text and its file
	// Written: the deciding rule names what the call targets (a pattern,
	// not every call of the tool) and the user wrote it in a settings file
	// (not an "always" answer remembered for them). For a web fetch, an
	// allow rule the user wrote names the host itself, not a parent domain
	// or a wildcard (rules.Set.OpensHost).
	Written bool
}

// Memo is a session's short-lived memory for tools (web_fetch keeps the
// pages it fetched in it for a few minutes): entries expire, and the whole
// is bounded in entries and bytes, the oldest going first. Safe for
// concurrent use; the zero value is ready.
type Memo struct {
	mu    sync.Mutex
	m     map[string]*memoEntry
	order []string // keys, oldest first
	size  int
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
}

type memoEntry struct {
	v       any
	size    int
	expires time.Time
}

// Memo bounds.
const (
	MemoMaxEntries = 64
	MemoMaxBytes   = 32 << 20
)

func (m *Memo) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Get returns the value kept under key, if it has not expired.
func (m *Memo) Get(key string) (any, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[key]
	if !ok || !m.now().Before(e.expires) {
		return nil, false
	}
	return e.v, true
}

// Put keeps v under key for ttl; size is what it costs against
// MemoMaxBytes. A value larger than the whole memo is not kept.
func (m *Memo) Put(key string, v any, size int, ttl time.Duration) {
	if m == nil || size > MemoMaxBytes {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]*memoEntry{}
	}
	m.drop(key)
	now := m.now()
	// Expired entries go first, then the oldest, until the new one fits.
	kept := m.order[:0]
	for _, k := range m.order {
		if e := m.m[k]; !now.Before(e.expires) {
			m.size -= e.size
			delete(m.m, k)
			continue
		}
		kept = append(kept, k)
	}
	m.order = kept
	for len(m.order) > 0 && (len(m.order) >= MemoMaxEntries || m.size+size > MemoMaxBytes) {
		m.drop(m.order[0])
	}
	m.m[key] = &memoEntry{v: v, size: size, expires: now.Add(ttl)}
	m.order = append(m.order, key)
	m.size += size
}

func (m *Memo) drop(key string) {
	e, ok := m.m[key]
	if !ok {
		return
	}
	m.size -= e.size
	delete(m.m, key)
	for i, k := range m.order {
		if k == key {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
}
