// Package pipeline runs one tool call through its stages: pre-execute gates,
// approval, guards, around-dispatch middleware, the body, post-execute, and
// result observers. It knows nothing about ACP: approval is an interface the
// agent implements.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/acp-bridge/acp-bridge/registry"
)

// DecisionKind is what a pre-execute gate decides.
type DecisionKind int

const (
	Allow DecisionKind = iota
	Deny
	Ask
)

// Decision is a gate's verdict; Reason explains Deny and Ask.
type Decision struct {
	Kind   DecisionKind
	Reason string
}

// Gate is a pre-execute policy. It sees the frozen arguments and cannot change them.
type Gate func(ctx context.Context, d *registry.Def, c *registry.Call) Decision

// Guard is a deny-only check run after the gates allowed (or the user approved).
// A non-empty reason denies; a denial cannot be undone.
type Guard func(ctx context.Context, d *registry.Def, c *registry.Call) (reason string)

// Outcome is the answer to an approval request.
type Outcome int

const (
	Approved Outcome = iota
	Rejected
	Cancelled
	Unavailable
)

// Approver asks the user about a call a gate marked Ask.
type Approver interface {
	Approve(ctx context.Context, d *registry.Def, c *registry.Call, reason string) (Outcome, error)
}

// Next runs the rest of the dispatch chain.
type Next func(ctx context.Context, c *registry.Call) registry.Result

// Middleware wraps dispatch (timeout policy, retry, metrics). The first
// listed is the outermost.
type Middleware func(d *registry.Def, next Next) Next

// Observer sees every finished call. It cannot change the result.
type Observer func(d *registry.Def, c *registry.Call, r registry.Result)

// Options configure a Pipeline. The zero value runs tools with no policy.
type Options struct {
	Gates      []Gate
	Approver   Approver
	Guards     []Guard
	Middleware []Middleware
	Observers  []Observer
	Logger     *slog.Logger
}

// Pipeline executes calls. It is safe for concurrent use.
type Pipeline struct{ o Options }

// New returns a pipeline; nil options mean none.
func New(o *Options) *Pipeline {
	p := &Pipeline{}
	if o != nil {
		p.o = *o
	}
	if p.o.Logger == nil {
		p.o.Logger = slog.New(slog.DiscardHandler)
	}
	return p
}

// Execute runs one call to completion and always returns a result: tool
// failures, denials and panics are failed results, never errors.
func (p *Pipeline) Execute(ctx context.Context, d *registry.Def, c *registry.Call) (r registry.Result) {
	if d == nil {
		return registry.ErrorResult("UNKNOWN_TOOL", fmt.Sprintf("unknown tool %q", c.Name))
	}
	defer func() {
		for _, obs := range p.o.Observers {
			p.safely("observer", d, func() { obs(d, c, r) })
		}
	}()
	if err := d.Validate(c.Args); err != nil {
		return registry.ErrorResult("INVALID_ARGS", err.Error())
	}
	if ctx.Err() != nil {
		return registry.ErrorResult("ABORTED_BEFORE_DISPATCH", "tool call aborted before dispatch")
	}
	if res, stop := p.policy(ctx, d, c); stop {
		return res
	}
	if ctx.Err() != nil {
		return registry.ErrorResult("ABORTED_BEFORE_DISPATCH", "tool call aborted before dispatch")
	}
	next := Next(func(ctx context.Context, c *registry.Call) registry.Result { return p.body(ctx, d, c) })
	for i := len(p.o.Middleware) - 1; i >= 0; i-- {
		next = p.o.Middleware[i](d, next)
	}
	r = next(ctx, c)
	if ctx.Err() != nil && !r.IsError {
		return registry.ErrorResult("ABORTED", "tool call aborted")
	}
	return r
}

// policy runs the gates, approval and guards. stop=true means the call must not run.
func (p *Pipeline) policy(ctx context.Context, d *registry.Def, c *registry.Call) (registry.Result, bool) {
	dec := Decision{Kind: Allow}
	for _, g := range p.o.Gates {
		var got Decision
		if !p.safely("gate", d, func() { got = g(ctx, d, c) }) {
			return registry.ErrorResult("GATE_FAILED", fmt.Sprintf("policy check for tool %q failed", d.Name)), true
		}
		if got.Kind == Deny {
			return registry.ErrorResult("DENIED", got.Reason), true
		}
		if got.Kind == Ask && dec.Kind == Allow {
			dec = got
		}
	}
	if dec.Kind == Ask {
		if p.o.Approver == nil {
			return registry.ErrorResult("APPROVAL_UNAVAILABLE", fmt.Sprintf("tool %q requires approval, but no approval channel is available", d.Name)), true
		}
		out, err := p.o.Approver.Approve(ctx, d, c, dec.Reason)
		if err != nil {
			if ctx.Err() != nil {
				out = Cancelled
			} else {
				p.o.Logger.Warn("approval failed", "tool", d.Name, "err", err)
				out = Unavailable
			}
		}
		switch out {
		case Approved:
		case Rejected:
			return registry.ErrorResult("REJECTED", fmt.Sprintf("the user rejected tool %q", d.Name)), true
		case Cancelled:
			return registry.ErrorResult("APPROVAL_CANCELLED", fmt.Sprintf("approval for tool %q was cancelled", d.Name)), true
		default:
			return registry.ErrorResult("APPROVAL_UNAVAILABLE", fmt.Sprintf("tool %q requires approval, but no approval channel is available", d.Name)), true
		}
	}
	for _, g := range p.o.Guards {
		var reason string
		if !p.safely("guard", d, func() { reason = g(ctx, d, c) }) {
			return registry.ErrorResult("GUARD_FAILED", fmt.Sprintf("guard for tool %q failed", d.Name)), true
		}
		if reason != "" {
			return registry.ErrorResult("DENIED", reason), true
		}
	}
	return registry.Result{}, false
}

// body runs the tool, recovering a panic into a failed result.
func (p *Pipeline) body(ctx context.Context, d *registry.Def, c *registry.Call) (r registry.Result) {
	defer func() {
		if rec := recover(); rec != nil {
			p.o.Logger.Error("tool panicked", "tool", d.Name, "panic", rec, "stack", string(debug.Stack()))
			r = registry.ErrorResult("TOOL_PANIC", fmt.Sprintf("tool %q crashed: %v", d.Name, rec))
		}
	}()
	res, err := d.Run(ctx, c)
	if err != nil {
		var te *registry.Error
		if errors.As(err, &te) {
			return registry.ErrorResult(te.Code, te.Message)
		}
		if ctx.Err() != nil {
			return registry.ErrorResult("ABORTED", "tool call aborted")
		}
		return registry.ErrorResult("TOOL_ERROR", err.Error())
	}
	return res
}

func (p *Pipeline) safely(stage string, d *registry.Def, f func()) (ok bool) {
	defer func() {
		if rec := recover(); rec != nil {
			p.o.Logger.Error("pipeline stage panicked", "stage", stage, "tool", d.Name, "panic", rec)
			ok = false
		}
	}()
	f()
	return true
}
