package registry

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Restriction narrows which global tools a scope sees: either an allow list
// (only these) or a deny list (all but these). An explicit empty allow list
// (non-nil, no names) masks every global tool. Several restrictions on one
// scope intersect. They are visibility, not a security boundary.
type Restriction struct {
	Allow []string
	Deny  []string
}

func (r Restriction) String() string {
	if r.Allow != nil {
		if len(r.Allow) == 0 {
			return "allow none"
		}
		return "allow " + strings.Join(r.Allow, ", ")
	}
	return "deny " + strings.Join(r.Deny, ", ")
}

// mask is a compiled restriction. An allow mask excludes globals registered
// later under other names; a deny mask admits them.
type mask struct {
	allow bool
	names map[string]bool
	r     Restriction
}

func (m *mask) admits(name string) bool { return m.names[name] == m.allow }

// Restrict adds a restriction to this scope and returns the function that
// lifts it. It refuses a restriction with neither list (a configuration
// that materialized empty would otherwise silently change nothing), one with
// both, an empty deny list, and any name that is unknown (not in
// KnownNames), reserved (run_code) or local to this scope (local tools
// bypass restrictions, so naming one is a mistake).
func (s *Scope) Restrict(r Restriction) (lift func(), err error) {
	if r.Allow == nil && len(r.Deny) == 0 {
		return nil, fmt.Errorf("registry: an empty restriction would change nothing; give allow or deny names (an empty allow list hides every tool)")
	}
	if r.Allow != nil && len(r.Deny) > 0 {
		return nil, fmt.Errorf("registry: a restriction is either an allow list or a deny list; add two restrictions to combine them")
	}
	names := r.Allow
	if r.Allow == nil {
		names = r.Deny
	}
	m := &mask{allow: r.Allow != nil, names: map[string]bool{},
		r: Restriction{Allow: slices.Clone(r.Allow), Deny: slices.Clone(r.Deny)}}
	reg := s.reg
	reg.mu.Lock()
	var bad []string
	for _, n := range names {
		switch {
		case n == CodeToolName:
			bad = append(bad, fmt.Sprintf("%q is reserved and cannot be restricted", n))
		case s.local[n] != nil:
			bad = append(bad, fmt.Sprintf("%q is local to this scope and bypasses restrictions", n))
		case reg.tools[n] == nil:
			bad = append(bad, fmt.Sprintf("%q is not a registered tool", n))
		}
		m.names[n] = true
	}
	if len(bad) > 0 {
		reg.mu.Unlock()
		return nil, fmt.Errorf("registry: restriction refused: %s", strings.Join(bad, "; "))
	}
	s.masks = append(s.masks, m)
	reg.mu.Unlock()
	reg.notify(Change{Op: RestrictionAdded, Scope: s, Restriction: &m.r})
	var once sync.Once
	return func() {
		once.Do(func() {
			reg.mu.Lock()
			s.masks = slices.DeleteFunc(s.masks, func(x *mask) bool { return x == m })
			reg.mu.Unlock()
			reg.notify(Change{Op: RestrictionRemoved, Scope: s, Restriction: &m.r})
		})
	}, nil
}
