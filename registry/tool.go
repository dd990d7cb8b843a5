package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
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
	// structured schema subset (see CompileStructured). Nil: derived from Out. A declared schema is checked against
	// every value the body returns; a derived one only when it carries
	// constraints the Go type cannot enforce (enum tags).
	Output json.RawMessage

	Run func(ctx context.Context, c *Call, in In) (Out, error)
	// Render turns the value into what the model reads. Nil: a string value
	// becomes one text block, anything else its JSON.
	Render func(in In, out Out) []Content
	// Meta returns display data stored with the result for PresentResult.
	Meta func(in In, out Out) any
	// EndsTurn, if set, says the turn ends after this result (Result.EndTurn).
	EndsTurn func(in In, out Out) bool

	// Optional, pure presenters: they read only their arguments and the stored result.
	PresentCall   func(in In) View
	PresentResult func(in In, r Result) View
	// Preview says what the call would do, from the files as they are now,
	// without doing it: an edit's hunks as they would be applied. Its Meta
	// is stored with the call, and the call's card (and a permission
	// request for it) shows PresentResult of a result with that Meta
	// instead of PresentCall, so the diff the user approves is the diff
	// that is applied. An error: no preview (the call's own card stands).
	Preview func(ctx context.Context, c *Call, in In) (Out, error)

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
	// Rule is the permission rule (package rules) an "always" answer
	// becomes for the project, kept across sessions: `Bash(go test:*)`,
	// `Edit(./**)`. Empty: the answer lasts for the session only (a
	// command line no prefix rule can describe safely).
	Rule string
}

// Def is a registered tool with its types erased, as the pipeline and the
// mapping see it.
type Def struct {
	Name        string
	Description string
	Timeout     time.Duration
	Retry       RetryPolicy
	Facts       Facts

	// The schemas, derived on first use (see define); read them through
	// Parameters, Output and Check.
	params func() (json.RawMessage, error)
	output func() (outSpec, error)
	schema func() (*jsonschema.Schema, error) // compiled on first use; nil: not validated here (RawSchema)
	broken atomic.Bool                        // Schemas has logged that params failed
	// log receives contained presenter panics: the Logger of the registry
	// the tool was first registered with; none, discarded.
	log atomic.Pointer[slog.Logger]
	// The typed functions, erased: each takes the call's decoded input (an
	// In, see Input) instead of decoding the arguments itself.
	decode          func(args json.RawMessage) (any, error)
	normalize       func(in any, value any) (Result, error)
	finalize        func(c *Call, r Result) []Content
	run             func(ctx context.Context, c *Call, in any) (Result, error)
	presentCall     func(in any) View
	presentResult   func(in any, r Result) View
	concurrencySafe func(in any) bool
	permission      func(c *Call, in any) *Permission
	preview         func(ctx context.Context, c *Call, in any) json.RawMessage
}

// outSpec is a tool's output schema and, when values must be checked at
// run time, its validator.
type outSpec struct {
	raw   json.RawMessage
	check *Structured
}

// Parameters is the JSON Schema of the tool's arguments, as the model is
// shown it. Nil when it cannot be derived (Check says why).
func (d *Def) Parameters() json.RawMessage {
	raw, _ := d.params()
	return raw
}

// Output is the JSON Schema of the tool's value; nil when it cannot be
// derived (Check says why).
func (d *Def) Output() json.RawMessage {
	o, _ := d.output()
	return o.raw
}

// Check derives and compiles everything define left for first use, and
// reports the first schema that fails. A tool whose Parameters fail is not
// offered to the model (Registry.Schemas) and its calls fail with
// INVALID_SCHEMA; tests of every tool call Check so that never ships.
func (d *Def) Check() error {
	if _, err := d.params(); err != nil {
		return err
	}
	if _, err := d.output(); err != nil {
		return err
	}
	if d.schema != nil {
		if _, err := d.schema(); err != nil {
			return fmt.Errorf("tool %q: parameters schema: %w", d.Name, err)
		}
	}
	return nil
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
// here, at registration; only a parameters schema that passes these checks
// but breaks the metaschema is found at its first call, because it is
// compiled then (see Def.Validate).
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
	// What the tool's Go types say is derived here, so a type that cannot
	// be described fails at registration; marshalling and compiling the
	// schemas waits for first use: doing it for every tool at registration
	// was a quarter of the time from spawn to the initialize answer
	// (BENCHMARKS.md, Start-up), and none of it is needed before the first
	// model request. Check forces it.
	if t.Parameters == nil && t.RawSchema {
		return nil, fmt.Errorf("registry: tool %q: RawSchema needs Parameters", t.Name)
	}
	var params func() (json.RawMessage, error)
	var sch func() (*jsonschema.Schema, error)
	switch {
	case t.RawSchema:
		if err := checkRawSchema(t.Parameters); err != nil {
			return nil, fmt.Errorf("registry: tool %q: %w", t.Name, err)
		}
		params = func() (json.RawMessage, error) { return t.Parameters, nil }
	case t.Parameters != nil:
		doc, err := checkSchema(t.Parameters)
		if err != nil {
			return nil, fmt.Errorf("registry: tool %q: %w", t.Name, err)
		}
		params = func() (json.RawMessage, error) { return t.Parameters, nil }
		// Compiled on first use: compiling checks the schema against the
		// JSON Schema metaschema, a millisecond a tool, paid at every start.
		sch = sync.OnceValues(func() (*jsonschema.Schema, error) { return compileSchema(t.Name, doc) })
	default:
		derived, err := parameterSchema(reflect.TypeFor[In](), t.Schema)
		if err != nil {
			return nil, fmt.Errorf("registry: tool %q: %w", t.Name, err)
		}
		params = sync.OnceValues(func() (json.RawMessage, error) {
			raw, err := json.Marshal(derived)
			if err != nil {
				return nil, fmt.Errorf("tool %q: parameters schema: %w", t.Name, err)
			}
			return raw, nil
		})
		sch = sync.OnceValues(func() (*jsonschema.Schema, error) {
			raw, err := params()
			if err != nil {
				return nil, err
			}
			doc, err := checkSchema(raw)
			if err != nil {
				return nil, err
			}
			return compileSchema(t.Name, doc)
		})
	}
	if t.Retry.Attempts < 0 || t.Retry.Backoff < 0 {
		return nil, fmt.Errorf("registry: tool %q: negative retry policy", t.Name)
	}
	if t.Timeout < 0 {
		return nil, fmt.Errorf("registry: tool %q: negative timeout", t.Name)
	}
	output, err := outputSchema[Out](t.Output)
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
		spec, err := output()
		if err != nil {
			return Result{}, &Error{Code: CodeInvalidSchema, Message: fmt.Sprintf("tool %q: output schema: %v", t.Name, err)}
		}
		if spec.check != nil {
			if err := spec.check.check(out); err != nil {
				return Result{}, err
			}
		}
		r := Result{Content: render(in, out), Value: out}
		if t.EndsTurn != nil {
			r.EndTurn = t.EndsTurn(in, out)
		}
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
	d := &Def{Name: t.Name, Description: t.Description, Timeout: t.Timeout, Retry: t.Retry,
		Facts: t.Facts, params: params, output: output, schema: sch, finalize: t.Finalize}
	d.decode = func(args json.RawMessage) (any, error) { return decode[In](args) }
	d.run = func(ctx context.Context, c *Call, x any) (Result, error) {
		in := x.(In)
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
	d.normalize = func(x any, value any) (Result, error) {
		in := x.(In)
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
	if t.PresentCall != nil {
		d.presentCall = func(x any) View { return t.PresentCall(x.(In)) }
	}
	if t.Preview != nil && t.Meta != nil && t.PresentResult != nil {
		d.preview = func(ctx context.Context, c *Call, x any) json.RawMessage {
			in := x.(In)
			out, err := t.Preview(ctx, c, in)
			if err != nil {
				return nil
			}
			m := t.Meta(in, out)
			if m == nil {
				return nil
			}
			b, _ := json.Marshal(m)
			return b
		}
	}
	if t.PresentResult != nil {
		d.presentResult = func(x any, r Result) View { return t.PresentResult(x.(In), r) }
	}
	if t.ConcurrencySafe != nil {
		d.concurrencySafe = func(x any) bool { return t.ConcurrencySafe(x.(In)) }
	}
	if t.Permission != nil {
		d.permission = func(c *Call, x any) *Permission { return t.Permission(c, x.(In)) }
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

// Run executes the body with the call's decoded input (Input: validated
// and decoded once per call). Arguments that fail are a failed result
// (INVALID_ARGS), not an error. An error from the body is returned as is;
// the pipeline turns it into a failed result.
func (d *Def) Run(ctx context.Context, c *Call) (Result, error) {
	x, err := d.Input(c).value()
	if err != nil {
		return errorResultOf(err), nil
	}
	return d.run(ctx, c, x)
}

// errorResultOf is the failed result of an *Error.
func errorResultOf(err error) Result {
	e := err.(*Error)
	return ErrorResult(e.Code, e.Message)
}

// PresentCall returns the tool's view of a call from its stored arguments
// (a replay, a test); the live path shares the call's Input instead. Nil:
// no presenter, bad arguments, or a presenter that panicked (the mapping
// falls back to a generic card).
func (d *Def) PresentCall(args json.RawMessage) View { return d.Decode(args).PresentCall() }

var discard = slog.New(slog.DiscardHandler)

func (d *Def) logger() *slog.Logger {
	if l := d.log.Load(); l != nil {
		return l
	}
	return discard
}

// PresentResult returns the tool's view of a result from the call's
// stored arguments, or nil (see PresentCall).
func (d *Def) PresentResult(args json.RawMessage, r Result) View {
	return d.Decode(args).PresentResult(r)
}

// ConcurrencySafe reports whether call c may overlap others, from its
// decoded input (see Input.ConcurrencySafe).
func (d *Def) ConcurrencySafe(c *Call) bool { return d.Input(c).ConcurrencySafe() }

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

// Normalize makes a result from a value that did not come out of call c's
// body (a post-execute replacement, a middleware's cached result): the
// value is checked against the output schema and converted to the tool's
// output type, then the content and meta are rendered from it, for the
// call's decoded input. The error is an *Error (INVALID_ARGS,
// INVALID_OUTPUT, INVALID_TOOL_OUTPUT).
func (d *Def) Normalize(c *Call, value any) (Result, error) {
	x, err := d.Input(c).value()
	if err != nil {
		return Result{}, err
	}
	return d.normalize(x, value)
}

// Permission returns the tool's approval request for call c, or nil when
// it needs none. It is computed once per call (see Input); a panicking
// check asks, with the panic as the reason.
func (d *Def) Permission(c *Call) *Permission { return d.Input(c).permission(c) }
