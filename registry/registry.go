package registry

import (
	"fmt"
	"slices"
	"sync"
)

// Registry holds the global tools. A Scope (one per session) layers local
// tools over it; one visibility function feeds prompt assembly, lookup and
// execution, so what the model sees and what runs never disagree.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*Def
}

// New returns an empty registry.
func New() *Registry { return &Registry{tools: map[string]*Def{}} }

// Add defines a typed tool and registers it globally.
func Add[In, Out any](r *Registry, t Tool[In, Out]) (unregister func(), err error) {
	d, err := Define(t)
	if err != nil {
		return nil, err
	}
	return r.Register(d)
}

// MustAdd is Add for tools built into the program: a bad definition is a bug.
func MustAdd[In, Out any](r *Registry, t Tool[In, Out]) {
	if _, err := Add(r, t); err != nil {
		panic(err)
	}
}

// Register adds a defined tool. A duplicate name fails.
func (r *Registry) Register(d *Def) (unregister func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[d.Name]; dup {
		return nil, fmt.Errorf("registry: tool %q is already registered", d.Name)
	}
	r.tools[d.Name] = d
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.tools[d.Name] == d {
			delete(r.tools, d.Name)
		}
	}, nil
}

// Scope is one session's view of the tools: the global registry plus local
// tools that shadow globals of the same name.
type Scope struct {
	reg   *Registry
	mu    sync.RWMutex
	local map[string]*Def
}

// NewScope returns a scope over r with no local tools.
func (r *Registry) NewScope() *Scope { return &Scope{reg: r, local: map[string]*Def{}} }

// Register adds a scope-local tool, shadowing any global of that name.
func (s *Scope) Register(d *Def) (unregister func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.local[d.Name]; dup {
		return nil, fmt.Errorf("registry: tool %q is already registered in this scope", d.Name)
	}
	s.local[d.Name] = d
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.local[d.Name] == d {
			delete(s.local, d.Name)
		}
	}, nil
}

// Get returns the tool this scope sees under name, or nil.
func (s *Scope) Get(name string) *Def {
	s.mu.RLock()
	d := s.local[name]
	s.mu.RUnlock()
	if d != nil {
		return d
	}
	s.reg.mu.RLock()
	defer s.reg.mu.RUnlock()
	return s.reg.tools[name]
}

// Visible returns every tool this scope sees, sorted by name.
func (s *Scope) Visible() []*Def {
	seen := map[string]*Def{}
	s.reg.mu.RLock()
	for n, d := range s.reg.tools {
		seen[n] = d
	}
	s.reg.mu.RUnlock()
	s.mu.RLock()
	for n, d := range s.local {
		seen[n] = d
	}
	s.mu.RUnlock()
	out := make([]*Def, 0, len(seen))
	for _, d := range seen {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Def) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}
