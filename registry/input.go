package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
)

// Input is one call's arguments, validated against its tool's parameter
// schema and decoded into the tool's input type at most once, then shared
// by everything that reads them: the concurrency check, the permission
// check, the presenters, the body and Normalize. The pipeline makes it
// when it first meets a call (Def.Input) and keeps it on the call, so a
// call costs one typed decode however many stages look at it; the live
// translator gets it with the call's event. A replay has only the stored
// arguments and decodes them again (Def.Decode).
//
// The decode happens on first use: a tool that neither classifies nor
// presents its calls decodes them only when the pipeline validates them.
// The typed value is shared, so a tool's functions must not modify what it
// references. An Input is safe for concurrent use.
type Input struct {
	def  *Def
	args json.RawMessage

	once sync.Once
	in   any   // the tool's In, when err is nil
	err  error // *Error INVALID_ARGS: the arguments fail the schema or the decode

	permOnce sync.Once
	perm     *Permission
}

// Decode returns the tool's Input for args, decoded on first use. A nil
// tool has no Input: nil, which every Input method accepts.
func (d *Def) Decode(args json.RawMessage) *Input {
	if d == nil {
		return nil
	}
	return &Input{def: d, args: args}
}

// Input returns c's arguments as this tool decodes them, made on the first
// use and kept on c. A call is handed from stage to stage, never used by
// two goroutines at once, so the first use (the pipeline's) sets it before
// any other stage can look. A call whose Args were replaced since, or that
// another tool's Input was kept for, gets a new one.
func (d *Def) Input(c *Call) *Input {
	if d == nil {
		return nil
	}
	if in := c.input; in != nil && in.def == d && sameBytes(in.args, c.Args) {
		return in
	}
	c.input = d.Decode(c.Args)
	return c.input
}

// Reuse returns known when it is this tool's Input of args (the live
// call's, carried by its event), else a new decode of args (a replay).
func (d *Def) Reuse(known *Input, args json.RawMessage) *Input {
	if known != nil && known.def == d && sameBytes(known.args, args) {
		return known
	}
	return d.Decode(args)
}

// Decoded is the Input the pipeline kept on c, or nil before any stage
// decoded it: what the agent hands the translator with the call's event.
func (c *Call) Decoded() *Input { return c.input }

// sameBytes reports whether a and b are the same slice (not merely equal
// bytes): a cached Input stands only for the very arguments it decoded,
// and comparing identities costs nothing however long the arguments are.
// Arguments changed in place are caught by the pipeline's frozen copy.
func sameBytes(a, b json.RawMessage) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// value is the decoded input, or the error that stopped it.
func (in *Input) value() (any, error) {
	in.once.Do(func() {
		if err := in.def.Validate(in.args); err != nil {
			in.err = err
			return
		}
		v, err := in.def.decode(in.args)
		if err != nil {
			in.err = &Error{Code: CodeInvalidArgs, Message: "invalid arguments: " + err.Error()}
			return
		}
		in.in = v
	})
	return in.in, in.err
}

// Err is nil when the arguments pass the schema and decode into the
// tool's input type, else an *Error with code INVALID_ARGS.
func (in *Input) Err() error {
	if in == nil {
		return &Error{Code: CodeUnknownTool, Message: "no tool to decode the arguments for"}
	}
	_, err := in.value()
	return err
}

// PresentCall returns the tool's view of the call, or nil (no presenter,
// arguments that fail the schema, or a presenter that panicked: the
// mapping falls back to a generic card). Presenters validate softly: a
// model's bad call or an old log gives no view, never an error.
func (in *Input) PresentCall() View {
	if in == nil || in.def.presentCall == nil {
		return nil
	}
	return in.present("presentCall", in.def.presentCall)
}

// PresentResult returns the tool's view of a result, or nil (see PresentCall).
func (in *Input) PresentResult(r Result) View {
	if in == nil || in.def.presentResult == nil {
		return nil
	}
	return in.present("presentResult", func(x any) View { return in.def.presentResult(x, r) })
}

// Preview returns the display data of what the call would do (Tool.Preview),
// or nil: no preview, arguments that fail, a preview that failed or panicked.
func (in *Input) Preview(ctx context.Context, c *Call) (meta json.RawMessage) {
	if in == nil || in.def.preview == nil {
		return nil
	}
	x, err := in.value()
	if err != nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			in.def.logger().Warn("preview panicked", "tool", in.def.Name, "panic", r)
			meta = nil
		}
	}()
	return in.def.preview(ctx, c, x)
}

// PresentPreview is the view of a call from its preview (Preview's meta),
// or nil: no preview, or a presenter that gives none.
func (in *Input) PresentPreview(meta json.RawMessage) View {
	if len(meta) == 0 {
		return nil
	}
	return in.PresentResult(Result{Meta: meta})
}

// present runs a presenter on the decoded input, containing its panic.
func (in *Input) present(name string, f func(x any) View) (v View) {
	defer func() {
		if r := recover(); r != nil {
			in.def.logger().Warn(name+" panicked", "tool", in.def.Name, "panic", r)
			v = nil
		}
	}()
	x, err := in.value()
	if err != nil {
		return nil
	}
	return f(x)
}

// ConcurrencySafe reports whether the call may overlap others. Anything
// but a clear yes is no: no classifier, invalid arguments (the call fails
// validation anyway, and nothing is known about it), or a panic. The
// classifier runs on every ask, since a tool may change its mind about the
// same arguments between calls; only the decode is kept.
func (in *Input) ConcurrencySafe() (ok bool) {
	if in == nil || in.def.concurrencySafe == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	x, err := in.value()
	return err == nil && in.def.concurrencySafe(x)
}

// permission is the tool's approval request for call c of these
// arguments, computed once: the pipeline's gate and the approver both ask,
// and a check may stat paths. A panicking check asks, with the panic as
// the reason; invalid arguments need none (they fail before policy runs).
func (in *Input) permission(c *Call) *Permission {
	d := in.def
	if d.permission == nil {
		return nil
	}
	in.permOnce.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				in.perm = &Permission{Reason: fmt.Sprintf("permission check of %s failed: %v", d.Name, r)}
			}
		}()
		if x, err := in.value(); err == nil {
			in.perm = d.permission(c, x)
		}
	})
	return in.perm
}
