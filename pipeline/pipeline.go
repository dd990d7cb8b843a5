// Package pipeline runs tool calls through their stages, in order:
// arguments frozen and validated → pre-execute gates → approval for Ask →
// guards → around-dispatch middleware → the body → post-execute → finalize →
// result observers. ExecuteBatch schedules a step's calls, overlapping the
// bodies of consecutive concurrency-safe calls. It knows nothing about ACP:
// approval is an interface the agent implements.
package pipeline

import (
	"bytes"
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

// Gate is a pre-execute policy. It sees the frozen arguments and cannot
// change them. The first Deny wins; otherwise the first Ask asks.
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

// Approver asks the user about a call a gate marked Ask. An error counts as
// Unavailable (or Cancelled when ctx is done): an ask never silently allows.
type Approver interface {
	Approve(ctx context.Context, d *registry.Def, c *registry.Call, reason string) (Outcome, error)
}

// Next runs the rest of the dispatch chain.
type Next func(ctx context.Context, c *registry.Call) registry.Result

// Middleware wraps dispatch (timeout policy, retry, metrics). The first
// listed is the outermost. It may replace the context the body sees, never
// the call's arguments.
type Middleware func(d *registry.Def, next Next) Next

// PostKind is what a post-execute hook decides.
type PostKind int

const (
	// Accept keeps the result, with Content replacing its content when non-nil.
	Accept PostKind = iota
	// Block turns the result into a failure whose content is Feedback.
	Block
)

// PostDecision is a post-execute hook's verdict. Context is additional
// context for the model, kept on Accept and on Block alike.
type PostDecision struct {
	Kind     PostKind
	Content  []registry.Content
	Feedback []registry.Content
	Context  []string
}

// PostHook inspects a finished call (denials and failures included). Hooks
// run in order; a Block ends the chain.
type PostHook func(ctx context.Context, d *registry.Def, c *registry.Call, r registry.Result) PostDecision

// Observer sees every finished call. It cannot change the result.
type Observer func(d *registry.Def, c *registry.Call, r registry.Result)

// DefaultMaxParallel bounds how many concurrency-safe bodies overlap.
const DefaultMaxParallel = 10

// Options configure a Pipeline. The zero value runs tools with no policy.
type Options struct {
	Gates       []Gate
	Approver    Approver
	Guards      []Guard
	Middleware  []Middleware
	PostExecute []PostHook
	Observers   []Observer
	// MaxParallel bounds overlapping bodies in ExecuteBatch: 0 means
	// DefaultMaxParallel, 1 runs every call alone.
	MaxParallel int
	Logger      *slog.Logger
}

// Pipeline executes calls. It is safe for concurrent use.
type Pipeline struct{ o Options }

// New returns a pipeline; nil options mean none. The options are copied.
func New(o *Options) *Pipeline {
	p := &Pipeline{}
	if o != nil {
		p.o = *o
	}
	if p.o.MaxParallel < 0 {
		panic("pipeline: negative MaxParallel")
	}
	if p.o.MaxParallel == 0 {
		p.o.MaxParallel = DefaultMaxParallel
	}
	if p.o.Logger == nil {
		p.o.Logger = slog.New(slog.DiscardHandler)
	}
	return p
}

// Execute runs one call to completion and always returns a result: tool
// failures, denials and panics are failed results, never errors. A nil d is
// an unknown tool. The body, once started, is always waited for.
func (p *Pipeline) Execute(ctx context.Context, d *registry.Def, c *registry.Call) registry.Result {
	if d == nil {
		return registry.ErrorResult("UNKNOWN_TOOL", fmt.Sprintf("unknown tool %q", c.Name))
	}
	frozen, r, ok := p.prepare(ctx, d, c)
	if ok {
		r = p.dispatch(ctx, d, c, frozen)
	}
	return p.commit(ctx, d, c, r)
}

// Failure texts (reference/dsh.md §1.4); the "Error: " prefix comes from
// registry.ErrorResult.
const (
	msgAbortedBefore = "tool call aborted before dispatch"
	msgAborted       = "tool call aborted"
)

func abortedBeforeDispatch() registry.Result {
	return registry.ErrorResult("ABORTED_BEFORE_DISPATCH", msgAbortedBefore)
}

// prepare freezes and validates the arguments and runs the policy stages.
// ok=false means the call must not dispatch and r says why.
func (p *Pipeline) prepare(ctx context.Context, d *registry.Def, c *registry.Call) (frozen []byte, r registry.Result, ok bool) {
	// The arguments were logged as they are now; keep a private copy so a
	// stage that rewrites them is caught before the body runs.
	frozen = bytes.Clone(c.Args)
	if err := d.Validate(c.Args); err != nil {
		return nil, errorResult(err, "INVALID_ARGS"), false
	}
	if ctx.Err() != nil {
		return nil, abortedBeforeDispatch(), false
	}
	if r, stop := p.policy(ctx, d, c); stop {
		return nil, r, false
	}
	if ctx.Err() != nil {
		return nil, abortedBeforeDispatch(), false
	}
	return frozen, registry.Result{}, true
}

// policy runs the gates, approval and guards. stop=true means the call must not run.
func (p *Pipeline) policy(ctx context.Context, d *registry.Def, c *registry.Call) (registry.Result, bool) {
	dec := Decision{Kind: Allow}
	for _, g := range p.o.Gates {
		var got Decision
		if err := p.safely("gate", d, func() { got = g(ctx, d, c) }); err != nil {
			return registry.ErrorResult("GATE_FAILED", fmt.Sprintf("policy check for tool %q failed: %v", d.Name, err)), true
		}
		switch got.Kind {
		case Allow:
		case Deny:
			reason := got.Reason
			if reason == "" {
				reason = fmt.Sprintf("tool %q was denied by policy", d.Name)
			}
			return registry.ErrorResult("DENIED", reason), true
		case Ask:
			if dec.Kind == Allow {
				dec = got
			}
		default:
			return registry.ErrorResult("GATE_FAILED", fmt.Sprintf("policy check for tool %q returned an unknown decision %d", d.Name, got.Kind)), true
		}
	}
	if dec.Kind == Ask {
		if r, stop := p.ask(ctx, d, c, dec.Reason); stop {
			return r, true
		}
	}
	for _, g := range p.o.Guards {
		var reason string
		if err := p.safely("guard", d, func() { reason = g(ctx, d, c) }); err != nil {
			return registry.ErrorResult("GUARD_FAILED", fmt.Sprintf("guard for tool %q failed: %v", d.Name, err)), true
		}
		if reason != "" {
			return registry.ErrorResult("DENIED", reason), true
		}
	}
	return registry.Result{}, false
}

// ask routes an Ask through the approver. Anything but a clear approval stops the call.
func (p *Pipeline) ask(ctx context.Context, d *registry.Def, c *registry.Call, reason string) (registry.Result, bool) {
	unavailable := func() (registry.Result, bool) {
		return registry.ErrorResult("APPROVAL_UNAVAILABLE", fmt.Sprintf("tool %q requires approval, but no approval channel is available", d.Name)), true
	}
	if p.o.Approver == nil {
		return unavailable()
	}
	var out Outcome
	var err error
	if perr := p.safely("approver", d, func() { out, err = p.o.Approver.Approve(ctx, d, c, reason) }); perr != nil {
		out, err = Unavailable, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			out = Cancelled
		} else {
			p.o.Logger.Warn("approval failed", "tool", d.Name, "call", c.ID, "err", err)
			out = Unavailable
		}
	}
	switch out {
	case Approved:
		return registry.Result{}, false
	case Rejected:
		return registry.ErrorResult("REJECTED", fmt.Sprintf("the user rejected tool %q", d.Name)), true
	case Cancelled:
		return registry.ErrorResult("APPROVAL_CANCELLED", fmt.Sprintf("approval for tool %q was cancelled", d.Name)), true
	}
	return unavailable()
}

// dispatch runs the middleware chain around the body. A panic in a
// middleware becomes a failed result like a panic in the body.
func (p *Pipeline) dispatch(ctx context.Context, d *registry.Def, c *registry.Call, frozen []byte) (r registry.Result) {
	defer func() {
		if rec := recover(); rec != nil {
			p.o.Logger.Error("middleware panicked", "tool", d.Name, "call", c.ID, "panic", rec, "stack", string(debug.Stack()))
			r = registry.ErrorResult("MIDDLEWARE_PANIC", fmt.Sprintf("middleware of tool %q crashed: %v", d.Name, rec))
		}
	}()
	next := Next(func(ctx context.Context, bc *registry.Call) registry.Result {
		if !bytes.Equal(bc.Args, frozen) {
			return registry.ErrorResult("ARGS_REWRITTEN", fmt.Sprintf("the arguments of tool %q were rewritten after they were logged; policy may not change them", d.Name))
		}
		return p.body(ctx, d, bc)
	})
	for i := len(p.o.Middleware) - 1; i >= 0; i-- {
		next = p.o.Middleware[i](d, next)
	}
	r = next(ctx, c)
	if ctx.Err() != nil && !r.IsError {
		// The body finished, but the caller gave up: the model must not
		// take a success it never waited for at face value.
		return registry.ErrorResult("ABORTED", msgAborted)
	}
	return r
}

// body runs the tool, recovering a panic into a failed result.
func (p *Pipeline) body(ctx context.Context, d *registry.Def, c *registry.Call) (r registry.Result) {
	defer func() {
		if rec := recover(); rec != nil {
			p.o.Logger.Error("tool panicked", "tool", d.Name, "call", c.ID, "panic", rec, "stack", string(debug.Stack()))
			r = registry.ErrorResult("TOOL_PANIC", fmt.Sprintf("tool %q crashed: %v", d.Name, rec))
		}
	}()
	res, err := d.Run(ctx, c)
	if err != nil {
		var te *registry.Error
		switch {
		case errors.As(err, &te):
			r = registry.ErrorResult(te.Code, te.Message)
		case ctx.Err() != nil:
			r = registry.ErrorResult("ABORTED", msgAborted)
		default:
			r = registry.ErrorResult("TOOL_ERROR", err.Error())
		}
		r.Meta = res.Meta // display data of what ran before the failure
		return r
	}
	return res
}

// commit runs post-execute, finalize and the observers on a finished call.
func (p *Pipeline) commit(ctx context.Context, d *registry.Def, c *registry.Call, r registry.Result) registry.Result {
	r = p.post(ctx, d, c, r)
	fin := r
	if err := p.safely("finalize", d, func() { fin = d.Finalize(c, r) }); err != nil {
		fin = registry.ErrorResult("TOOL_PANIC", fmt.Sprintf("finalizing tool %q crashed: %v", d.Name, err))
	}
	r = fin
	for _, obs := range p.o.Observers {
		// Observers only watch: a crashing one is logged and contained, and
		// the result stands, because the call's effects already happened.
		_ = p.safely("observer", d, func() { obs(d, c, r) })
	}
	return r
}

// post runs the post-execute hooks in order.
func (p *Pipeline) post(ctx context.Context, d *registry.Def, c *registry.Call, r registry.Result) registry.Result {
	own := len(r.Context) // contexts the call itself produced, dropped on a block
	for _, h := range p.o.PostExecute {
		var dec PostDecision
		if err := p.safely("post-execute", d, func() { dec = h(ctx, d, c, r) }); err != nil {
			return registry.ErrorResult("POST_EXECUTE_FAILED", fmt.Sprintf("post-execute check of tool %q failed: %v", d.Name, err))
		}
		switch dec.Kind {
		case Accept:
			if dec.Content != nil {
				// Replaced content withholds the typed value too: a Code
				// Mode program must not see what policy took out.
				r.Content, r.Value = dec.Content, nil
			}
			if len(dec.Context) > 0 {
				r.Context = append(r.Context[:len(r.Context):len(r.Context)], dec.Context...)
			}
		case Block:
			fb := dec.Feedback
			if len(fb) == 0 {
				fb = []registry.Content{registry.Text(fmt.Sprintf("Error: the output of tool %q was blocked by policy", d.Name))}
			}
			ctxs := append(append([]string(nil), r.Context[own:]...), dec.Context...)
			if len(ctxs) == 0 {
				ctxs = nil
			}
			return registry.Result{Content: fb, IsError: true, Code: "BLOCKED", Context: ctxs}
		default:
			return registry.ErrorResult("POST_EXECUTE_FAILED", fmt.Sprintf("post-execute check of tool %q returned an unknown decision %d", d.Name, dec.Kind))
		}
	}
	return r
}

// safely runs f, turning a panic into an error (logged with its stack).
func (p *Pipeline) safely(stage string, d *registry.Def, f func()) (err error) {
	defer func() {
		if rec := recover(); rec != nil {
			p.o.Logger.Error("pipeline stage panicked", "stage", stage, "tool", d.Name, "panic", rec, "stack", string(debug.Stack()))
			err = fmt.Errorf("%v", rec)
		}
	}()
	f()
	return nil
}

// errorResult turns an error into a failed result, keeping a registry
// error's code and using code otherwise.
func errorResult(err error, code string) registry.Result {
	var te *registry.Error
	if errors.As(err, &te) {
		return registry.ErrorResult(te.Code, te.Message)
	}
	return registry.ErrorResult(code, err.Error())
}
