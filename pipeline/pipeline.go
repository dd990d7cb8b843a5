// Package pipeline runs tool calls through their stages, in order:
// arguments frozen, validated and decoded once (registry.Input, shared by
// every later stage) → pre-execute gates → approval for Ask →
// guards → around-dispatch middleware → the body → post-execute → finalize →
// result observers. ExecuteBatch schedules a step's calls, overlapping the
// bodies of consecutive concurrency-safe calls; Prepare, Staged.Dispatch and
// Staged.Commit let another scheduler (Code Mode) keep the ordered stages in
// order itself. A cancelled call never runs and never reports success:
// cancelled before its body, ABORTED_BEFORE_DISPATCH; after, ABORTED (a more
// specific failure stands). Stages can be added to a live pipeline and
// removed again (AddGate and its kin return the undo); a call runs with the
// stages it started with. It knows nothing about ACP: approval is an
// interface the agent implements.
package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

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

// Middleware wraps dispatch (timeout policy, retry). The first listed is
// the outermost. It may replace the context the body sees (the caller's
// cancellation is fused back in), never the call's arguments. It may also
// answer without calling next: that result is normalized like a body's.
type Middleware func(d *registry.Def, next Next) Next

// PostKind is what a post-execute hook decides.
type PostKind int

const (
	// Accept keeps the result, with Content or Value replacing part of it.
	Accept PostKind = iota
	// Block turns the result into a failure whose content is Feedback.
	Block
)

// PostDecision is a post-execute hook's verdict. Context is additional
// context for the model, kept on Accept and on Block alike.
type PostDecision struct {
	Kind PostKind
	// Content, on Accept, replaces what the model reads; the canonical
	// value and the display meta stay.
	Content []registry.Content
	// Value, on Accept, replaces the canonical value: it is checked against
	// the output schema and the content and meta are rendered from it. At
	// most one of Content and Value; never Value on a failed call.
	Value    any
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

// stages is one snapshot of the pluggable stages. It is never changed once
// published: an Add or its undo publishes a new one, so a call that took a
// snapshot runs with it to the end.
type stages struct {
	gates  []*Gate
	guards []*Guard
	mw     []*Middleware
	post   []*PostHook
	obs    []*Observer
}

// Pipeline executes calls. It is safe for concurrent use, including adding
// and removing stages while calls run.
type Pipeline struct {
	approver    Approver
	maxParallel int
	log         *slog.Logger

	mu sync.Mutex // serializes edits of st
	st atomic.Pointer[stages]
}

// New returns a pipeline; nil options mean none. The options are copied.
func New(o *Options) *Pipeline {
	p := &Pipeline{}
	st := &stages{}
	if o != nil {
		if o.MaxParallel < 0 {
			panic("pipeline: negative MaxParallel")
		}
		p.approver, p.maxParallel, p.log = o.Approver, o.MaxParallel, o.Logger
		st.gates, st.guards, st.mw, st.post, st.obs = ptrs(o.Gates), ptrs(o.Guards), ptrs(o.Middleware), ptrs(o.PostExecute), ptrs(o.Observers)
	}
	if p.maxParallel == 0 {
		p.maxParallel = DefaultMaxParallel
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.st.Store(st)
	return p
}

func ptrs[T any](fs []T) []*T {
	out := make([]*T, len(fs))
	for i := range fs {
		out[i] = &fs[i]
	}
	return out
}

// AddGate adds a pre-execute gate after the others, the way a plugin
// registers one on a live session, and returns the function that removes
// it again. Calls already past their gates are not affected; the next call
// runs with it.
func (p *Pipeline) AddGate(g Gate) (remove func()) {
	return add(p, g, func(s *stages) *[]*Gate { return &s.gates })
}

// AddGuard adds a guard after the others and returns its undo. A guard added
// while calls run applies from the next call on, never half-way through one.
func (p *Pipeline) AddGuard(g Guard) (remove func()) {
	return add(p, g, func(s *stages) *[]*Guard { return &s.guards })
}

// AddMiddleware adds a middleware inside the others (closest to the body)
// and returns its undo.
func (p *Pipeline) AddMiddleware(m Middleware) (remove func()) {
	return add(p, m, func(s *stages) *[]*Middleware { return &s.mw })
}

// AddPostExecute adds a post-execute hook after the others and returns its undo.
func (p *Pipeline) AddPostExecute(h PostHook) (remove func()) {
	return add(p, h, func(s *stages) *[]*PostHook { return &s.post })
}

// AddObserver adds a result observer and returns its undo.
func (p *Pipeline) AddObserver(o Observer) (remove func()) {
	return add(p, o, func(s *stages) *[]*Observer { return &s.obs })
}

func add[T any](p *Pipeline, f T, list func(*stages) *[]*T) func() {
	ptr := &f
	p.edit(func(s *stages) { l := list(s); *l = append(slices.Clip(*l), ptr) })
	var once sync.Once
	return func() {
		once.Do(func() {
			p.edit(func(s *stages) {
				l := list(s)
				*l = slices.DeleteFunc(slices.Clone(*l), func(x *T) bool { return x == ptr })
			})
		})
	}
}

// edit publishes a changed copy of the stages; the slices it changes must
// be copied by f, since calls in flight still read the old ones.
func (p *Pipeline) edit(f func(*stages)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := *p.st.Load()
	f(&s)
	p.st.Store(&s)
}

// Execute runs one call to completion and always returns a result: tool
// failures, denials and panics are failed results, never errors. A nil d is
// an unknown tool. The body, once started, is always waited for.
func (p *Pipeline) Execute(ctx context.Context, d *registry.Def, c *registry.Call) registry.Result {
	s := p.Prepare(ctx, d, c)
	s.Dispatch()
	return s.Commit()
}

// Staged is one call going through the pipeline in three steps, for a
// caller that schedules many calls and keeps policy in submission order
// while bodies overlap (ExecuteBatch, Code Mode): Prepare and Commit are
// the ordered stages, Dispatch may run concurrently with other calls'
// stages. Each step is called once, in order, and the call runs with the
// stages the pipeline had when Prepare took them.
type Staged struct {
	p      *Pipeline
	st     *stages
	ctx    context.Context
	d      *registry.Def
	c      *registry.Call
	frozen []byte
	r      registry.Result

	skip       bool // nothing more runs: an unknown tool
	ready      bool // passed validation and policy: Dispatch runs the body
	noPost     bool // a policy stage crashed, or cancelled before it entered: post-execute does not judge it
	dispatched bool // the body started
}

// Prepare freezes and validates the arguments and runs the policy stages:
// gates, approval, guards. A call whose context is already done runs no
// policy and no post-execute and ends ABORTED_BEFORE_DISPATCH (or
// INVALID_ARGS, which is more specific); finalize and the observers still
// see it. A nil d is an unknown tool (UNKNOWN_TOOL, no stage runs), unless
// the context is done.
func (p *Pipeline) Prepare(ctx context.Context, d *registry.Def, c *registry.Call) *Staged {
	s := &Staged{p: p, st: p.st.Load(), ctx: ctx, d: d, c: c}
	if d == nil {
		// Cancelled first, as ExecuteBatch answers a name it cannot resolve.
		s.r, s.skip = registry.ErrorResult(registry.CodeUnknownTool, fmt.Sprintf("unknown tool %q", c.Name)), true
		if ctx.Err() != nil {
			s.r = abortedBeforeDispatch()
		}
		return s
	}
	// The arguments were logged as they are now; keep a private copy so a
	// stage that rewrites them is caught before the body runs.
	s.frozen = bytes.Clone(c.Args)
	// Validated and decoded once, here or by the concurrency check before:
	// every later stage (permission, the body, the presenters) shares it.
	// A decoding error is more specific than a cancellation and wins, as in
	// the seed. A call cancelled before it entered runs no policy and no
	// post-execute, but its observers still see it once.
	if err := d.Input(c).Err(); err != nil {
		s.r, s.noPost = errorResult(err, registry.CodeInvalidArgs), ctx.Err() != nil
		return s
	}
	if ctx.Err() != nil {
		s.r, s.noPost = abortedBeforeDispatch(), true
		return s
	}
	if r, stop := s.policy(); stop {
		s.r = r
		return s
	}
	if ctx.Err() != nil {
		s.r = abortedBeforeDispatch()
		return s
	}
	s.ready = true
	return s
}

// Ready reports whether Prepare let the call through, so Dispatch will run
// its body; a caller may then commit a stopped call without a worker.
func (s *Staged) Ready() bool { return s.ready }

// Dispatch runs the middleware chain and the body of a call Prepare let
// through; for any other call it does nothing.
func (s *Staged) Dispatch() {
	if s.ready {
		s.r = s.dispatch()
	}
}

// Commit runs post-execute, finalize and the observers, and returns the
// final result.
func (s *Staged) Commit() registry.Result {
	if s.skip {
		return s.r
	}
	p, d, c := s.p, s.d, s.c
	r := s.r
	if !s.noPost {
		r = s.overtaken(s.post(r))
	}
	fin := r
	if err := p.safely("finalize", d, func() { fin = d.Finalize(c, r) }); err != nil {
		fin = registry.ErrorResult(registry.CodeToolPanic, fmt.Sprintf("finalizing tool %q crashed: %v", d.Name, err))
	}
	r = fin
	for _, obs := range s.st.obs {
		// Observers only watch: a crashing one is logged and contained, and
		// the result stands, because the call's effects already happened.
		_ = p.safely("observer", d, func() { (*obs)(d, c, r) })
	}
	return r
}

// Failure texts, model-facing (docs/DESIGN.md); the "Error: " prefix comes from
// registry.ErrorResult.
const (
	msgAbortedBefore = "tool call aborted before dispatch"
	msgAborted       = "tool call aborted"
)

func abortedBeforeDispatch() registry.Result {
	return registry.ErrorResult(registry.CodeAbortedBeforeDispatch, msgAbortedBefore)
}

func aborted() registry.Result { return registry.ErrorResult(registry.CodeAborted, msgAborted) }

// overtaken is r unless the caller gave up while a stage produced a
// success: the model must not take a success nobody waited for at face
// value. It becomes ABORTED, or ABORTED_BEFORE_DISPATCH when no body ran
// (a middleware's own result), keeping the additional context gathered so
// far. A failure is more specific than the cancellation and stands.
func (s *Staged) overtaken(r registry.Result) registry.Result {
	if r.IsError || s.ctx.Err() == nil {
		return r
	}
	a := abortedBeforeDispatch()
	if s.dispatched {
		a = aborted()
	}
	a.Context = r.Context
	return a
}

// policy runs the gates, approval and guards. stop=true means the call must not run.
func (s *Staged) policy() (registry.Result, bool) {
	p, ctx, d, c := s.p, s.ctx, s.d, s.c
	dec := Decision{Kind: Allow}
	for _, g := range s.st.gates {
		var got Decision
		if err := p.safely("gate", d, func() { got = (*g)(ctx, d, c) }); err != nil {
			s.noPost = true
			return registry.ErrorResult(registry.CodeGateFailed, fmt.Sprintf("policy check for tool %q failed: %v", d.Name, err)), true
		}
		switch got.Kind {
		case Allow:
		case Deny:
			reason := got.Reason
			if reason == "" {
				reason = fmt.Sprintf("tool %q was denied by policy", d.Name)
			}
			return registry.ErrorResult(registry.CodeDenied, reason), true
		case Ask:
			if dec.Kind == Allow {
				dec = got
			}
		default:
			return registry.ErrorResult(registry.CodeGateFailed, fmt.Sprintf("policy check for tool %q returned an unknown decision %d", d.Name, got.Kind)), true
		}
	}
	if dec.Kind == Ask {
		if r, stop := p.ask(ctx, d, c, dec.Reason); stop {
			return r, true
		}
	}
	for _, g := range s.st.guards {
		var reason string
		if err := p.safely("guard", d, func() { reason = (*g)(ctx, d, c) }); err != nil {
			s.noPost = true
			return registry.ErrorResult(registry.CodeGuardFailed, fmt.Sprintf("guard for tool %q failed: %v", d.Name, err)), true
		}
		if reason != "" {
			return registry.ErrorResult(registry.CodeDenied, reason), true
		}
	}
	return registry.Result{}, false
}

// ask routes an Ask through the approver. Anything but a clear approval stops the call.
func (p *Pipeline) ask(ctx context.Context, d *registry.Def, c *registry.Call, reason string) (registry.Result, bool) {
	unavailable := func() (registry.Result, bool) {
		return registry.ErrorResult(registry.CodeApprovalUnavailable, fmt.Sprintf("tool %q requires approval, but no approval channel is available", d.Name)), true
	}
	if p.approver == nil {
		return unavailable()
	}
	var out Outcome
	var err error
	if perr := p.safely("approver", d, func() { out, err = p.approver.Approve(ctx, d, c, reason) }); perr != nil {
		out, err = Unavailable, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			out = Cancelled
		} else {
			p.log.Warn("approval failed", "tool", d.Name, "call", c.ID, "err", err)
			out = Unavailable
		}
	}
	switch out {
	case Approved:
		return registry.Result{}, false
	case Rejected:
		return registry.ErrorResult(registry.CodeRejected, fmt.Sprintf("the user rejected tool %q", d.Name)), true
	case Cancelled:
		return registry.ErrorResult(registry.CodeApprovalCancelled, fmt.Sprintf("approval for tool %q was cancelled", d.Name)), true
	}
	return unavailable()
}

// dispatch runs the middleware chain around the body. A panic in a
// middleware becomes a failed result like a panic in the body.
func (s *Staged) dispatch() (r registry.Result) {
	p, ctx, d, c := s.p, s.ctx, s.d, s.c
	defer func() {
		if rec := recover(); rec != nil {
			p.log.Error("middleware panicked", "tool", d.Name, "call", c.ID, "panic", rec, "stack", string(debug.Stack()))
			r = registry.ErrorResult(registry.CodeMiddlewarePanic, fmt.Sprintf("middleware of tool %q crashed: %v", d.Name, rec))
		}
	}()
	next := Next(func(bctx context.Context, bc *registry.Call) registry.Result {
		if !bytes.Equal(bc.Args, s.frozen) {
			return registry.ErrorResult(registry.CodeArgsRewritten, fmt.Sprintf("the arguments of tool %q were rewritten after they were logged; policy may not change them", d.Name))
		}
		// A cancelled call never runs: whether the caller gave up while a
		// middleware waited, or a middleware passes a context already done.
		if ctx.Err() != nil || bctx.Err() != nil {
			return abortedBeforeDispatch()
		}
		if bctx != ctx {
			// A middleware swapped in a context of its own (a deadline not
			// derived from the caller's): fuse the caller's cancellation
			// back in, so the body still stops when the caller gives up.
			fused, cancel := context.WithCancelCause(bctx)
			stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
			defer func() { stop(); cancel(nil) }()
			bctx = fused
		}
		s.dispatched = true
		return p.body(bctx, d, bc)
	})
	for i := len(s.st.mw) - 1; i >= 0; i-- {
		next = (*s.st.mw[i])(d, next)
	}
	r = next(ctx, c)
	if !s.dispatched && !r.IsError {
		r = s.normalize(r)
	}
	return s.overtaken(r)
}

// normalize treats a middleware's own result like a dispatched one: its
// value checked against the output schema and the content rendered from it
// for this call (a cached result may come from another call), and its meta
// required to be JSON.
func (s *Staged) normalize(r registry.Result) registry.Result {
	if r.Value != nil {
		nr, err := s.d.Normalize(s.c, r.Value)
		if err != nil {
			return errorResult(err, registry.CodeInvalidOutput)
		}
		if nr.Meta == nil {
			nr.Meta = r.Meta
		}
		nr.Context = r.Context
		r = nr
	}
	if len(r.Meta) > 0 && !json.Valid(r.Meta) {
		return registry.ErrorResult(registry.CodeInvalidToolOutput, fmt.Sprintf("the display meta of tool %q is not JSON", s.d.Name))
	}
	return r
}

// body runs the tool, recovering a panic into a failed result.
func (p *Pipeline) body(ctx context.Context, d *registry.Def, c *registry.Call) (r registry.Result) {
	defer func() {
		if rec := recover(); rec != nil {
			p.log.Error("tool panicked", "tool", d.Name, "call", c.ID, "panic", rec, "stack", string(debug.Stack()))
			r = registry.ErrorResult(registry.CodeToolPanic, fmt.Sprintf("tool %q crashed: %v", d.Name, rec))
		}
	}()
	res, err := d.Run(ctx, c)
	if err != nil {
		var te *registry.Error
		switch {
		case errors.As(err, &te):
			r = registry.ErrorResult(te.Code, te.Message)
		case ctx.Err() != nil:
			r = aborted()
		default:
			r = registry.ErrorResult(registry.CodeToolError, err.Error())
		}
		r.Meta = res.Meta // display data of what ran before the failure
		return r
	}
	return res
}

// post runs the post-execute hooks in order.
func (s *Staged) post(r registry.Result) registry.Result {
	p, ctx, d, c := s.p, s.ctx, s.d, s.c
	own := len(r.Context) // contexts the call itself produced, dropped on a block
	failed := func(msg string) registry.Result {
		return registry.ErrorResult(registry.CodePostExecuteFailed, fmt.Sprintf("post-execute check of tool %q %s", d.Name, msg))
	}
	for _, h := range s.st.post {
		var dec PostDecision
		if err := p.safely("post-execute", d, func() { dec = (*h)(ctx, d, c, r) }); err != nil {
			return failed(fmt.Sprintf("failed: %v", err))
		}
		switch dec.Kind {
		case Accept:
			switch {
			case dec.Content != nil && dec.Value != nil:
				return failed("replaced both the content and the value; replace one, the other follows")
			case dec.Value != nil && r.IsError:
				return failed("replaced the value of a failed call, which has none")
			case dec.Value != nil:
				// A new value is held to the output schema and re-rendered,
				// so what the model reads and what a program gets agree.
				nr, err := d.Normalize(c, dec.Value)
				if err != nil {
					return errorResult(err, registry.CodeInvalidOutput)
				}
				r.Content, r.Value, r.Meta = nr.Content, nr.Value, nr.Meta
			case dec.Content != nil:
				// New content only changes what the model reads: the
				// canonical value and the display meta stay.
				r.Content = dec.Content
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
			return registry.Result{Content: fb, IsError: true, Code: registry.CodeBlocked, Context: ctxs}
		default:
			return failed(fmt.Sprintf("returned an unknown decision %d", dec.Kind))
		}
	}
	return r
}

// safely runs f, turning a panic into an error (logged with its stack).
func (p *Pipeline) safely(stage string, d *registry.Def, f func()) (err error) {
	defer func() {
		if rec := recover(); rec != nil {
			p.log.Error("pipeline stage panicked", "stage", stage, "tool", d.Name, "panic", rec, "stack", string(debug.Stack()))
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
