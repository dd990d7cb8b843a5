package registry

import (
	"maps"
	"slices"
)

// ChangeOp is what changed.
type ChangeOp int

const (
	ToolAdded ChangeOp = iota + 1
	ToolRemoved
	RestrictionAdded
	RestrictionRemoved
	ModeChanged
)

func (op ChangeOp) String() string {
	switch op {
	case ToolAdded:
		return "tool added"
	case ToolRemoved:
		return "tool removed"
	case RestrictionAdded:
		return "restriction added"
	case RestrictionRemoved:
		return "restriction removed"
	case ModeChanged:
		return "mode changed"
	}
	return "unknown change"
}

// Change describes one change to what some scope sees. Listeners use it to
// refresh what they derived (the prompt's tool list, the Code Mode SDK).
type Change struct {
	Op          ChangeOp
	Name        string       // the tool, for ToolAdded / ToolRemoved
	Scope       *Scope       // nil: a global change, seen by every scope
	Restriction *Restriction // for RestrictionAdded / RestrictionRemoved
	Mode        Mode         // for ModeChanged ("" on a scope: inherits again)
}

// OnChange calls f once for every change, global or in any scope, after
// the change took effect and outside the registry's lock (f may read the
// registry). Listeners run in the order they subscribed. It returns the function that stops the calls.
func (r *Registry) OnChange(f func(Change)) (stop func()) {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	if r.listeners == nil {
		r.listeners = map[int]func(Change){}
	}
	id := r.nextID
	r.nextID++
	r.listeners[id] = f
	return func() {
		r.lmu.Lock()
		defer r.lmu.Unlock()
		delete(r.listeners, id)
	}
}

// OnChange calls f after every change that affects this scope: global
// changes and this scope's own.
func (s *Scope) OnChange(f func(Change)) (stop func()) {
	return s.reg.OnChange(func(c Change) {
		if c.Scope == nil || c.Scope == s {
			f(c)
		}
	})
}

func (r *Registry) notify(c Change) {
	r.lmu.Lock()
	ids := slices.Sorted(maps.Keys(r.listeners))
	fs := make([]func(Change), len(ids))
	for i, id := range ids {
		fs[i] = r.listeners[id]
	}
	r.lmu.Unlock()
	for _, f := range fs {
		func() {
			defer func() {
				if p := recover(); p != nil {
					log := r.Logger
					if log == nil {
						log = discard
					}
					log.Error("registry change listener panicked", "change", c.Op.String(), "tool", c.Name, "panic", p)
				}
			}()
			f(c)
		}()
	}
}
