package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"sync/atomic"
	"time"

	jsg "github.com/google/jsonschema-go/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Tool is a typed tool definition. In is decoded from the validated JSON
// arguments; Out is the body's value, rendered for the model by Render.
type Tool[In, Out any] struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of In. Nil: derived from In with
	// jsonschema-go (json names, `jsonschema:"description"` tags, omitempty
	// or omitzero = optional, structs closed), `enum:"a,b"` tags added, then
	// Schema applied. Prefer deriving: a declared schema can drift from In.
	Parameters json.RawMessage
	// Schema adjusts the derived parameter schema where the Go type cannot
	// say enough (a minimum, a minLength). Ignored when Parameters is set.
	Schema func(s *jsg.Schema)
	// RawSchema marks Parameters as someone else's schema, shown to the
	// model as is and not validated here: an MCP server validates its own
	// input, and its schema may use what this harness does not compile.
	RawSchema bool
	// Output is the JSON Schema of the value Run returns, within the
	// structured schema subset (see CompileStructured, without the object
	// root). Nil: derived from Out. A declared schema is checked against
	// every value the body returns; a derived one only when it carries
	// constraints the Go type cannot enforce (enum tags).
	Output json.RawMessage

	Run func(ctx context.Context, c *Call, in In) (Out, error)
	// Render turns the value into what the model reads. Nil: a string value
	// becomes one text block, anything else its JSON.
	Render func(in In, out Out) []Content
	// Meta returns display data stored with the result for PresentResult.
	Meta func(in In, out Out) any

	// Optional, pure presenters: they read only their arguments and the stored result.
	PresentCall   func(in In) View
	PresentResult func(in In, r Result) View

	ConcurrencySafe func(in In) bool
	// Timeout is enforced by the pipeline's timeout middleware, cooperatively:
	// the body's context is cancelled and the body is drained.
	Timeout time.Duration
	// Retry declares the tool retryable: the pipeline's retry middleware runs
	// it again after a failure that may be transient. Zero: never retried.
	Retry RetryPolicy

	// Finalize adjusts the final content of every call, failures included;
	// it runs exactly once per call, after post-execute. It must be pure.
	Finalize func(c *Call, r Result) []Content

	// Permission says whether this call needs the user's approval (nil: no).
	// It may read the call (cwd, roots) but must not do I/O beyond stat-ing
	// paths: it runs before the call is allowed to do anything.
	Permission func(c *Call, in In) *Permission

	// Facts say what the tool is; policy (plan mode, accept-edits) reads
	// them, never the card a presenter draws.
	Facts Facts
}

// Facts are what a tool declares about every call of it, the way MCP
// tools carry readOnlyHint. The zero value claims nothing: the tool may
// change anything.
type Facts struct {
	// ReadOnly: a call only looks (reads, searches, plans); it changes
	// neither files nor anything outside the session.
	ReadOnly bool
	// Edits: a call changes files in the workspace, and nothing else (no
	// commands run): what accept-edits lets through.
	Edits bool
	// Kind is the ACP tool kind of its calls (read, edit, delete, move,
	// search, execute, think, fetch, other); "" for other.
	Kind string
}

// Permission is a tool's request for the user's approval of one call.
type Permission struct {
	Reason string // why, for logs and the model if it is rejected
	// Key is what an "always" answer remembers, scoped to what the button
	// says: "bash:go test" for a command, "edit:/abs/workspace" for edits
	// inside the workspace. Empty: the tool's name.
	Key string
	// Subject completes the option names: "Always allow `go test`" has
	// Subject "`go test`". Empty: the tool's name.
	Subject string
}

// Def is a registered tool with its types erased, as the pipeline and the
// mapping see it.
type Def struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	Output      json.RawMessage
	Timeout     time.Duration
	Retry       RetryPolicy
	Facts       Facts

	schema *jsonschema.Schema // nil: not validated here (RawSchema)
	// lastValid is the last argument text that passed Validate: a call is
	// validated when it is classified and again when it is prepared, and
	// the verdict is a pure function of the text.
	lastValid atomic.Pointer[string]
	// log receives contained presenter panics: the Logger of the registry
	// the tool was first registered with; none, discarded.
	log             atomic.Pointer[slog.Logger]
	normalize       func(args json.RawMessage, value any) (Result, error)
	finalize        func(c *Call, r Result) []Content
	run             func(ctx context.Context, c *Call) (Result, error)
	presentCall     func(args json.RawMessage) View
	presentResult   func(args json.RawMessage, r Result) View
	concurrencySafe func(args json.RawMessage) bool
	permission      func(c *Call) *Permission
}

// RetryPolicy says how often a retryable tool is tried again and how long
// to wait between attempts.
type RetryPolicy struct {
	Attempts int           // extra attempts after the first; 0: not retryable
	Backoff  time.Duration // wait before each retry, doubled every time
	// Codes are the failure codes worth retrying. Nil: TOOL_ERROR (a plain
	// error from the body) and TOOL_TIMEOUT.
	Codes []string
}

// Define checks a typed tool and erases its types. A bad definition fails
// here, at registration, never at call time.
func Define[In, Out any](t Tool[In, Out]) (*Def, error) {
	if t.Name == CodeToolName {
		return nil, fmt.Errorf("registry: tool name %q is reserved for Code Mode", t.Name)
	}
	return define(t)
}

// DefineCodeTool defines the reserved run_code tool, for AddCodeTool's and
// Scope.SetCodeTool's privileged path; Define refuses the name.
func DefineCodeTool[In, Out any](t Tool[In, Out]) (*Def, error) {
	if t.Name != CodeToolName {
		return nil, fmt.Errorf("registry: the code tool must be named %q, not %q", CodeToolName, t.Name)
	}
	return define(t)
}

func define[In, Out any](t Tool[In, Out]) (*Def, error) {
	if t.Name == "" {
		return nil, fmt.Errorf("registry: tool without a name")
	}
	if !validName(t.Name) {
		return nil, fmt.Errorf("registry: tool name %q: use letters, digits, '_' and '-' (at most 64)", t.Name)
	}
	if t.Run == nil {
		return nil, fmt.Errorf("registry: tool %q has no Run", t.Name)
	}
	params := t.Parameters
	if params == nil {
		if t.RawSchema {
			return nil, fmt.Errorf("registry: tool %q: RawSchema needs Parameters", t.Name)
		}
		var err error
		params, err = deriveParameters(reflect.TypeFor[In](), t.Schema)
		if err != nil {
			return nil, fmt.Errorf("registry: tool %q: %w", t.Name, err)
		}
	}
	var sch *jsonschema.Schema
	var err error
	if t.RawSchema {
		err = checkRawSchema(params)
	} else {
		sch, err = compileSchema(t.Name, params)
	}
	if err != nil {
		return nil, fmt.Errorf("registry: tool %q: %w", t.Name, err)
	}
	if t.Retry.Attempts < 0 || t.Retry.Backoff < 0 {
		return nil, fmt.Errorf("registry: tool %q: negative retry policy", t.Name)
	}
	if t.Timeout < 0 {
		return nil, fmt.Errorf("registry: tool %q: negative timeout", t.Name)
	}
	output, outSchema, err := outputSchema[Out](t.Output)
	if err != nil {
		return nil, fmt.Errorf("registry: tool %q: output schema: %w", t.Name, err)
	}
	render := t.Render
	if render == nil {
		render = func(_ In, out Out) []Content {
			if s, ok := any(out).(string); ok {
				return []Content{Text(s)}
			}
			b, _ := json.Marshal(out)
			return []Content{Text(string(b))}
		}
	}
	// finish turns a value into a result: checked against the output
	// schema, rendered, with its display meta.
	finish := func(in In, out Out) (Result, error) {
		if outSchema != nil {
			if err := outSchema.check(out); err != nil {
				return Result{}, err
			}
		}
		r := Result{Content: render(in, out), Value: out}
		if t.Meta != nil {
			if m := t.Meta(in, out); m != nil {
				b, err := json.Marshal(m)
				if err != nil {
					return Result{}, Errorf(CodeInvalidToolOutput, fmt.Sprintf("tool %q: display meta is not JSON: %v", t.Name, err))
				}
				r.Meta = b
			}
		}
		return r, nil
	}
	d := &Def{Name: t.Name, Description: t.Description, Parameters: params, Output: output,
		Timeout: t.Timeout, Retry: t.Retry, Facts: t.Facts, schema: sch, finalize: t.Finalize}
	d.run = func(ctx context.Context, c *Call) (Result, error) {
		in, err := decode[In](c.Args)
		if err != nil {
			return ErrorResult(CodeInvalidArgs, "invalid arguments: "+err.Error()), nil
		}
		out, err := t.Run(ctx, c, in)
		if err != nil {
			// A body that failed part way (a cancelled command) may still
			// have display data: what it printed before it stopped is
			// stored, so a replay shows what the live card showed.
			var r Result
			if t.Meta != nil {
				if m := t.Meta(in, out); m != nil {
					r.Meta, _ = json.Marshal(m)
				}
			}
			return r, err
		}
		r, err := finish(in, out)
		if err != nil {
			return Result{}, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		return r, nil
	}
	d.normalize = func(args json.RawMessage, value any) (Result, error) {
		in, err := decode[In](args)
		if err != nil {
			return Result{}, Errorf(CodeInvalidArgs, "invalid arguments: "+err.Error())
		}
		out, ok := value.(Out)
		if !ok {
			// A value of another Go type (a cached result, a policy's
			// replacement built as a map) must still be an Out.
			b, err := json.Marshal(value)
			if err != nil {
				return Result{}, Errorf(CodeInvalidOutput, fmt.Sprintf("invalid output: tool %q: the value is not JSON: %v", t.Name, err))
			}
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&out); err != nil {
				return Result{}, Errorf(CodeInvalidOutput, fmt.Sprintf("invalid output: tool %q: the value does not fit the tool's output type: %v", t.Name, err))
			}
		}
		return finish(in, out)
	}
	// Presenters validate softly: arguments that fail the schema (a model's
	// bad call, an old log) give no view, never an error.
	if t.PresentCall != nil {
		d.presentCall = func(args json.RawMessage) View {
			in, err := decode[In](args)
			if err != nil || d.Validate(args) != nil {
				return nil
			}
			return t.PresentCall(in)
		}
	}
	if t.PresentResult != nil {
		d.presentResult = func(args json.RawMessage, r Result) View {
			in, err := decode[In](args)
			if err != nil || d.Validate(args) != nil {
				return nil
			}
			return t.PresentResult(in, r)
		}
	}
	if t.ConcurrencySafe != nil {
		// A call with invalid arguments is exclusive, the defensive default:
		// it fails validation anyway, and nothing is known about it.
		d.concurrencySafe = func(args json.RawMessage) bool {
			in, err := decode[In](args)
			return err == nil && d.Validate(args) == nil && t.ConcurrencySafe(in)
		}
	}
	if t.Permission != nil {
		d.permission = func(c *Call) *Permission {
			in, err := decode[In](c.Args)
			if err != nil {
				return nil // invalid arguments fail validation before anything runs
			}
			return t.Permission(c, in)
		}
	}
	return d, nil
}

func decode[In any](args json.RawMessage) (In, error) {
	var in In
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	err := json.Unmarshal(args, &in)
	return in, err
}

func validName(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Run executes the body with validated arguments. An error from the body is
// returned as is; the pipeline turns it into a failed result.
func (d *Def) Run(ctx context.Context, c *Call) (Result, error) { return d.run(ctx, c) }

// PresentCall returns the tool's view of a call, or nil (no presenter, bad
// arguments, or a presenter that panicked: the mapping falls back to a generic card).
func (d *Def) PresentCall(args json.RawMessage) (v View) {
	if d == nil || d.presentCall == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			d.logger().Warn("presentCall panicked", "tool", d.Name, "panic", r)
			v = nil
		}
	}()
	return d.presentCall(args)
}

var discard = slog.New(slog.DiscardHandler)

func (d *Def) logger() *slog.Logger {
	if l := d.log.Load(); l != nil {
		return l
	}
	return discard
}

// PresentResult returns the tool's view of a result, or nil (see PresentCall).
func (d *Def) PresentResult(args json.RawMessage, r Result) (v View) {
	if d == nil || d.presentResult == nil {
		return nil
	}
	defer func() {
		if rec := recover(); rec != nil {
			d.logger().Warn("presentResult panicked", "tool", d.Name, "panic", rec)
			v = nil
		}
	}()
	return d.presentResult(args, r)
}

// ConcurrencySafe reports whether this call may overlap others. Anything
// but a clear yes (including a panic) is no.
func (d *Def) ConcurrencySafe(args json.RawMessage) (ok bool) {
	if d.concurrencySafe == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return d.concurrencySafe(args)
}

// Finalize returns r with the tool's final content adjustment applied. A
// tool without one, or a finalize that returns nil, leaves the content as
// it is. The pipeline recovers a panic here.
func (d *Def) Finalize(c *Call, r Result) Result {
	if d.finalize == nil {
		return r
	}
	if content := d.finalize(c, r); content != nil {
		r.Content = content
	}
	return r
}

// Normalize makes a result from a value that did not come out of this
// call's body (a post-execute replacement, a middleware's cached result):
// the value is checked against the output schema and converted to the
// tool's output type, then the content and meta are rendered from it, for
// the call's arguments. The error is an *Error (INVALID_OUTPUT,
// INVALID_TOOL_OUTPUT).
func (d *Def) Normalize(args json.RawMessage, value any) (Result, error) {
	return d.normalize(args, value)
}

// Permission returns the tool's approval request for this call, or nil when
// it needs none. A panicking check asks, with the panic as the reason.
func (d *Def) Permission(c *Call) (p *Permission) {
	if d.permission == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			p = &Permission{Reason: fmt.Sprintf("permission check of %s failed: %v", d.Name, r)}
		}
	}()
	return d.permission(c)
}
