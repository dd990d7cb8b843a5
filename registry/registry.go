package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// CodeToolName is the reserved Code Mode tool. It cannot be registered,
// shadowed or restricted; AddCodeTool installs it.
const CodeToolName = "run_code"

// Mode is how tools are offered to the model.
type Mode string

const (
	// Native offers every visible tool as a wire tool.
	Native Mode = "native"
	// Code offers only run_code; every other tool is reached from a program.
	Code Mode = "code"
	// Both offers the visible tools and run_code.
	Both Mode = "both"
)

// Registry holds the global tools. A Scope (one per session) layers local
// tools over it; one visibility function (Registry.resolve) feeds prompt
// assembly, lookup and execution, so what the model sees and what runs never
// disagree. It is safe for concurrent use.
type Registry struct {
	// One lock for the registry and all its scopes: a lookup then sees a
	// consistent picture of globals, locals, masks and mode together.
	mu       sync.RWMutex
	tools    map[string]*Def
	codeTool *Def
	mode     Mode

	lmu       sync.Mutex
	listeners map[int]func(Change)
	nextID    int

	// Logger receives contained listener panics. Nil: discarded.
	Logger *slog.Logger
}

// New returns an empty registry in native mode.
func New() *Registry { return &Registry{tools: map[string]*Def{}, mode: Native} }

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

// Register adds a defined tool globally. A duplicate name or the reserved
// run_code fails. The returned function removes exactly this definition.
func (r *Registry) Register(d *Def) (unregister func(), err error) {
	return r.register(nil, d)
}

func (r *Registry) register(s *Scope, d *Def) (func(), error) {
	if d == nil || d.run == nil {
		return nil, fmt.Errorf("registry: register a tool made by Define")
	}
	if d.Name == CodeToolName {
		return nil, fmt.Errorf("registry: tool name %q is reserved for Code Mode", d.Name)
	}
	layer := "globally"
	r.mu.Lock()
	m := r.tools
	if s != nil {
		m, layer = s.local, "in this scope"
	}
	if _, dup := m[d.Name]; dup {
		r.mu.Unlock()
		return nil, fmt.Errorf("registry: tool %q is already registered %s", d.Name, layer)
	}
	m[d.Name] = d
	r.mu.Unlock()
	if r.Logger != nil {
		d.log.CompareAndSwap(nil, r.Logger)
	}
	r.notify(Change{Op: ToolAdded, Name: d.Name, Scope: s})
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			removed := m[d.Name] == d
			if removed {
				delete(m, d.Name)
			}
			r.mu.Unlock()
			if removed {
				r.notify(Change{Op: ToolRemoved, Name: d.Name, Scope: s})
			}
		})
	}, nil
}

// AddCodeTool defines and installs the Code Mode tool, the one tool named
// run_code (an empty Name means run_code). It can be installed once and
// never removed, so a mode once valid stays valid.
func AddCodeTool[In, Out any](r *Registry, t Tool[In, Out]) error {
	if t.Name == "" {
		t.Name = CodeToolName
	}
	if t.Name != CodeToolName {
		return fmt.Errorf("registry: the code tool must be named %q, not %q", CodeToolName, t.Name)
	}
	d, err := define(t)
	if err != nil {
		return err
	}
	r.mu.Lock()
	if r.codeTool != nil {
		r.mu.Unlock()
		return fmt.Errorf("registry: the code tool is already installed")
	}
	r.codeTool = d
	r.mu.Unlock()
	r.notify(Change{Op: ToolAdded, Name: d.Name})
	return nil
}

// SetCodeTool installs this scope's own run_code, made with DefineCodeTool:
// Code Mode programs run against a session's tools and pipeline, so each
// session binds its own. Like the registry's, it is installed once and
// never removed, so a mode once valid stays valid.
func (s *Scope) SetCodeTool(d *Def) error {
	if d == nil || d.Name != CodeToolName {
		return fmt.Errorf("registry: a scope's code tool must be named %q", CodeToolName)
	}
	s.reg.mu.Lock()
	if s.codeTool != nil {
		s.reg.mu.Unlock()
		return fmt.Errorf("registry: this scope's code tool is already installed")
	}
	s.codeTool = d
	s.reg.mu.Unlock()
	s.reg.notify(Change{Op: ToolAdded, Name: d.Name, Scope: s})
	return nil
}

// SetMode sets the mode of every scope that does not set its own. Code and
// Both need the code tool installed.
func (r *Registry) SetMode(m Mode) error { return r.setMode(nil, m) }

func (r *Registry) setMode(s *Scope, m Mode) error {
	r.mu.Lock()
	switch m {
	case Native:
	case Code, Both:
		if r.codeTool == nil && (s == nil || s.codeTool == nil) {
			r.mu.Unlock()
			return fmt.Errorf("registry: mode %q needs the %s tool, and none is installed", m, CodeToolName)
		}
	case "":
		if s == nil {
			r.mu.Unlock()
			return fmt.Errorf("registry: the registry mode cannot be empty")
		}
	default:
		r.mu.Unlock()
		return fmt.Errorf("registry: unknown tool mode %q (native, code or both)", m)
	}
	if s == nil {
		r.mode = m
	} else {
		s.mode = m
	}
	r.mu.Unlock()
	r.notify(Change{Op: ModeChanged, Scope: s, Mode: m})
	return nil
}

// Scope is one session's view of the tools: the global registry seen
// through its restrictions, plus local tools that shadow globals of the same
// name and bypass the restrictions.
type Scope struct {
	reg   *Registry
	local map[string]*Def // guarded by reg.mu, like everything below
	masks []*mask
	mode  Mode // "": the registry's
	// codeTool is this scope's own run_code (bound to its session), which
	// takes the place of the registry's; see SetCodeTool.
	codeTool *Def
}

// NewScope returns a scope over r with no local tools and no restrictions.
func (r *Registry) NewScope() *Scope { return &Scope{reg: r, local: map[string]*Def{}} }

// Register adds a scope-local tool, shadowing any global of that name.
func (s *Scope) Register(d *Def) (unregister func(), err error) { return s.reg.register(s, d) }

// SetMode overrides the registry's mode for this scope; "" inherits it again.
func (s *Scope) SetMode(m Mode) error { return s.reg.setMode(s, m) }

// Mode returns the mode in effect for this scope.
func (s *Scope) Mode() Mode {
	s.reg.mu.RLock()
	defer s.reg.mu.RUnlock()
	return s.reg.modeOf(s)
}

func (r *Registry) modeOf(s *Scope) Mode {
	if s != nil && s.mode != "" {
		return s.mode
	}
	return r.mode
}

// resolve is the one visibility function: the tool scope s (nil: the global
// view) sees under name, or nil. Everything else derives from it.
// The caller holds r.mu.
func (r *Registry) resolve(s *Scope, name string) *Def {
	if name == CodeToolName {
		if r.modeOf(s) == Native {
			return nil
		}
		if s != nil && s.codeTool != nil {
			return s.codeTool
		}
		return r.codeTool
	}
	if s != nil {
		if d := s.local[name]; d != nil {
			return d // local tools are merged after the masks
		}
	}
	d := r.tools[name]
	if d == nil || s == nil {
		return d
	}
	for _, m := range s.masks {
		if !m.admits(name) {
			return nil
		}
	}
	return d
}

// direct reports whether the model may call name directly in scope s.
func (r *Registry) direct(s *Scope, name string) bool {
	return r.modeOf(s) != Code || name == CodeToolName
}

// Get returns the tool scope s sees under name, or nil. A nil scope is the
// global view. Code Mode programs reach tools through Get.
func (r *Registry) Get(name string, s *Scope) *Def {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.resolve(s, name)
}

// Visible returns every tool scope s sees, sorted by name, run_code
// included when the mode offers it.
func (r *Registry) Visible(s *Scope) []*Def {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.visible(s)
}

func (r *Registry) visible(s *Scope) []*Def {
	out := make([]*Def, 0, len(r.tools)+1)
	for name := range r.tools {
		if s != nil && s.local[name] != nil {
			continue // the local one is listed below
		}
		if d := r.resolve(s, name); d != nil {
			out = append(out, d)
		}
	}
	if s != nil {
		for name := range s.local {
			out = append(out, r.resolve(s, name))
		}
	}
	if d := r.resolve(s, CodeToolName); d != nil {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Def) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// KnownNames returns, sorted, every tool name scope s could see before its
// restrictions: the globals and its local tools, never run_code. It is the
// universe Restrict checks names against, so a typo fails loud while a
// tool restricted away stays a normal absence.
func (r *Registry) KnownNames(s *Scope) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.tools))
	for name := range r.tools {
		names = append(names, name)
	}
	if s != nil {
		for name := range s.local {
			if r.tools[name] == nil {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// Schema is one tool as the model is offered it.
type Schema struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	Output      json.RawMessage
}

// Schemas returns the tools the model may call directly in scope s, sorted:
// every visible tool in native mode, only run_code in code mode, both sets
// in both mode. The schemas are copies: editing one changes nothing the
// model is offered.
func (r *Registry) Schemas(s *Scope) []Schema {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Schema
	for _, d := range r.visible(s) {
		if !r.direct(s, d.Name) {
			continue
		}
		params, err := d.params()
		if err != nil {
			// Offered without its schema the model would call it blind;
			// its calls fail with INVALID_SCHEMA (Validate).
			if !d.broken.Swap(true) { // once, not at every model request
				d.logger().Error("tool not offered: its parameters schema failed", "tool", d.Name, "err", err)
			}
			continue
		}
		out = append(out, Schema{Name: d.Name, Description: d.Description,
			Parameters: bytes.Clone(params), Output: bytes.Clone(d.Output())})
	}
	return out
}

// Resolve returns the tool a direct model call names, or an *Error with code
// UNKNOWN_TOOL: the name is not visible, or (code mode) it is visible but
// only callable from inside a run_code program.
func (r *Registry) Resolve(name string, s *Scope) (*Def, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d := r.resolve(s, name)
	if d == nil {
		var names []string
		for _, v := range r.visible(s) {
			if r.direct(s, v.Name) {
				names = append(names, v.Name)
			}
		}
		avail := "(none)"
		if len(names) > 0 {
			avail = strings.Join(names, ", ")
		}
		return nil, &Error{Code: CodeUnknownTool, Message: fmt.Sprintf("unknown tool %q; available tools: %s", name, avail)}
	}
	if !r.direct(s, name) {
		return nil, &Error{Code: CodeUnknownTool, Message: CodeOnlyMessage(name)}
	}
	return d, nil
}

// CodeOnlyMessage is the failure of a direct model call to a tool other
// than run_code in code mode (codemode/DESIGN.md).
func CodeOnlyMessage(name string) string {
	return fmt.Sprintf("only `%s` is callable directly — call `%s` from inside a `%s` program instead", CodeToolName, name, CodeToolName)
}

// Get returns the tool this scope sees under name, or nil.
func (s *Scope) Get(name string) *Def { return s.reg.Get(name, s) }

// Visible returns every tool this scope sees, sorted by name.
func (s *Scope) Visible() []*Def { return s.reg.Visible(s) }

// KnownNames returns the tool names this scope could see before its
// restrictions, sorted, run_code excluded.
func (s *Scope) KnownNames() []string { return s.reg.KnownNames(s) }

// Schemas returns the tools the model may call directly in this scope.
func (s *Scope) Schemas() []Schema { return s.reg.Schemas(s) }

// Resolve returns the tool a direct model call names in this scope, or an
// UNKNOWN_TOOL *Error.
func (s *Scope) Resolve(name string) (*Def, error) { return s.reg.Resolve(name, s) }
