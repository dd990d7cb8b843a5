package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
)

// ToolName is the reserved name of the Code Mode tool.
const ToolName = "run_code"

// SubCallKind names a program's calls in their ids: the n-th call a run
// submits is registry.ChildID(<run_code id>, SubCallKind, n).
const SubCallKind = "code"

// Mode says how the tools are offered to the model: the registry's one
// tools-mode type, which the scope's visibility follows.
type Mode = registry.Mode

const (
	// ModeNative offers every tool as its own schema; no run_code.
	ModeNative = registry.Native
	// ModeCode offers run_code only, with the SDK in the system prompt.
	ModeCode = registry.Code
	// ModeBoth offers every native tool and run_code.
	ModeBoth = registry.Both
)

// Modes lists the modes in the order a picker shows them.
var Modes = []Mode{ModeNative, ModeCode, ModeBoth}

// ParseMode reads a mode name; the empty string is ModeNative.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeNative:
		return ModeNative, nil
	case ModeCode, ModeBoth:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown tools mode %q (want native, code or both)", s)
}

// Limits bound one run. Zero fields take the defaults.
type Limits struct {
	// Compute is the JavaScript busy time a run may use (default 60s).
	// Time spent awaiting tool calls does not count.
	Compute time.Duration
	// Wall is the wall-clock ceiling of a run, tool calls included (default 10m).
	Wall time.Duration
	// MaxOutputBytes bounds the JSON-serialized logs plus the completion
	// value (default 64 MiB).
	MaxOutputBytes int
	// MaxParallel bounds concurrency-safe sub-calls running at once
	// (0: the default 10; 1 makes every call run alone; negative is refused).
	MaxParallel int
}

// Default limits (codemode/DESIGN.md).
const (
	DefaultCompute        = 60 * time.Second
	DefaultWall           = 10 * time.Minute
	DefaultMaxOutputBytes = 64 << 20
	DefaultMaxParallel    = 10
)

func (l Limits) withDefaults() Limits {
	if l.Compute <= 0 {
		l.Compute = DefaultCompute
	}
	if l.Wall <= 0 {
		l.Wall = DefaultWall
	}
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if l.MaxParallel == 0 {
		l.MaxParallel = DefaultMaxParallel
	}
	return l
}

// Host is the session side of a run: which tools the program can call, the
// pipeline their sub-calls go through, and how a sub-call is shown. The
// agent implements it over its pipeline and event log. Every method is
// called from the run's loop, one at a time, in submission order.
type Host interface {
	// Tools returns the tools bound into the program's `tools` object (a
	// run_code among them is skipped).
	Tools() []*registry.Def
	// Lookup returns the tool a binding calls, read again at each call, or
	// nil when it is gone.
	Lookup(name string) *registry.Def
	// Pipeline is the complete pipeline sub-calls go through (gates,
	// approval, guards, middleware, post-execute). The run drives its
	// stages itself, so policy runs in submission order while bodies of
	// concurrency-safe calls overlap. Nil: a pipeline with no policy.
	Pipeline() *pipeline.Pipeline
	// Start shows a sub-call (the session logs it and its card appears),
	// right before its policy runs.
	Start(ctx context.Context, d *registry.Def, c *registry.Call)
	// Finish shows a sub-call's final result, right after its commit and
	// before the program sees it. ctx is cancelled when the run settles.
	Finish(ctx context.Context, d *registry.Def, c *registry.Call, r registry.Result)
}

// Values maps tool results to the values a program receives, and declares
// their types in the SDK. The two must agree.
type Values interface {
	// OutputSchema is the JSON Schema of the tool's value; nil renders `unknown`.
	OutputSchema(d *registry.Def) json.RawMessage
	// Value is the canonical JSON value of a successful result.
	Value(d *registry.Def, r registry.Result) (json.RawMessage, error)
}

// TextValues resolves every call to its result's text, typed string. It is
// the default while the registry does not carry typed output values.
type TextValues struct{}

var stringSchema = json.RawMessage(`{"type":"string"}`)

// OutputSchema implements Values.
func (TextValues) OutputSchema(*registry.Def) json.RawMessage { return stringSchema }

// Value implements Values.
func (TextValues) Value(_ *registry.Def, r registry.Result) (json.RawMessage, error) {
	return json.Marshal(r.Text())
}

// TypedValues resolves a call to the tool's typed value (registry.Result's
// Value, the body's Out) when the tool has an output schema, typed by that
// schema; otherwise to the result's text, typed string. The value is the
// final canonical value after policy: post-execute that replaced only the
// content leaves it, one that replaced the value is what the program gets.
type TypedValues struct{}

// OutputSchema implements Values.
func (TypedValues) OutputSchema(d *registry.Def) json.RawMessage {
	if d != nil && len(d.Output()) > 0 {
		return d.Output()
	}
	return stringSchema
}

// Value implements Values.
func (TypedValues) Value(d *registry.Def, r registry.Result) (json.RawMessage, error) {
	if d != nil && len(d.Output()) > 0 && r.Value != nil {
		return json.Marshal(r.Value)
	}
	return json.Marshal(r.Text())
}

// Options configure a Runner. Nil means defaults.
type Options struct {
	Limits Limits
	Values Values       // default TextValues
	Logger *slog.Logger // default: discard
}

// Runner runs programs. It holds no per-run state and is safe for concurrent use.
type Runner struct {
	limits Limits
	values Values
	log    *slog.Logger
}

// NewRunner returns a runner; nil options mean defaults.
func NewRunner(o *Options) *Runner {
	r := &Runner{}
	if o != nil {
		r.limits, r.values, r.log = o.Limits, o.Values, o.Logger
	}
	r.limits = r.limits.withDefaults()
	if r.values == nil {
		r.values = TextValues{}
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// Limits returns the limits in effect.
func (r *Runner) Limits() Limits { return r.limits }
