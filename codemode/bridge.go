package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
)

// bridge dispatches a run's binding calls (codemode/DESIGN.md). It is
// the run's driver lane, driven by the run's loop goroutine between
// JavaScript entries: calls start strictly in submission order, and the
// ordered stages (the start event, validation and policy, post-execute and
// the result event) run one at a time on the loop, in submission order. So
// the gates and permission prompts of Promise.all sub-calls run one after
// the other in the order the program made the calls, and results commit in
// that order even when bodies finish out of order.
//
// Only bodies overlap: those of consecutive concurrency-safe calls run on
// goroutines, up to max at once. Any other call waits for the calls before
// it to commit, then runs alone, on the loop itself, and holds the barrier
// through its commit: the program can do nothing but wait for it, and a
// sequence of awaited calls then costs no goroutine switch at all.
type bridge struct {
	ctx    context.Context // cancelled when the run settles
	host   Host
	pipe   *pipeline.Pipeline
	parent *registry.Call
	max    int
	log    *slog.Logger
	wake   func() // tells the loop a body finished

	// Owned by the loop goroutine.
	queue   []*subCall // submitted, not started
	started []*flight  // started, not committed, in submission order
	n       int        // sub-calls numbered so far
	running int        // bodies on their own goroutine, not yet collected

	jobs     chan *flight   // bodies for the workers; capacity max
	workers  int            // workers started (they stop when drain closes jobs)
	finished chan *flight   // bodies that ended on a worker; capacity max
	inflight sync.WaitGroup // bodies handed to the workers and not ended
}

// subCall is one binding call waiting to start.
type subCall struct {
	id   string
	name string
	args json.RawMessage
	// c is the call, made when the call is first classified: it keeps the
	// decoded input (registry.Def.Input) while the call waits to start.
	c *registry.Call
	// done receives the outcome, exactly once, unless the call was abandoned
	// before it started. It is called on the loop.
	done func(d *registry.Def, r registry.Result)
}

// flight is a started call on its way to its commit.
type flight struct {
	sc     *subCall
	d      *registry.Def
	c      *registry.Call
	staged *pipeline.Staged
	ended  bool // the body (if any) is over: it may commit
	alone  bool // exclusive: nothing starts until it commits
}

func newBridge(ctx context.Context, host Host, parent *registry.Call, max int, log *slog.Logger, wake func()) *bridge {
	pipe := host.Pipeline()
	if pipe == nil {
		pipe = pipeline.New(nil)
	}
	return &bridge{ctx: ctx, host: host, pipe: pipe, parent: parent, max: max, log: log, wake: wake,
		jobs: make(chan *flight, max), finished: make(chan *flight, max)}
}

// submit queues a call and returns its sub-id. Numbers follow submission
// order, not start or completion order.
func (b *bridge) submit(name string, args json.RawMessage, done func(*registry.Def, registry.Result)) string {
	b.n++
	sc := &subCall{id: registry.ChildID(b.parent.ID, SubCallKind, b.n), name: name, args: args, done: done}
	b.queue = append(b.queue, sc)
	return sc.id
}

// pump commits what may commit and starts what may start, in submission
// order, until nothing more can happen now. It reports whether it did
// anything, so the loop settles the outcomes before waiting.
//
// Starting comes first: a call that may start gets its body going before
// earlier results commit, so bodies overlap as much as the bound allows.
func (b *bridge) pump() (progressed bool) {
	for {
		if b.startNext() {
			progressed = true
			continue
		}
		b.collect()
		if !b.commit() {
			return progressed
		}
		progressed = true
	}
}

// collect marks the bodies that finished on their goroutines.
func (b *bridge) collect() {
	for {
		select {
		case f := <-b.finished:
			f.ended = true
			b.running--
		default:
			return
		}
	}
}

// commit commits the oldest started call if its body is over. The result
// goes to the host (the result event) and then to the program.
func (b *bridge) commit() bool {
	if len(b.started) == 0 || !b.started[0].ended {
		return false
	}
	f := b.started[0]
	b.started[0] = nil
	b.started = b.started[1:]
	r := b.settle(f)
	f.sc.done(f.d, r)
	return true
}

// settle finishes a flight: post-execute and the rest of the commit, then
// the host's result event. A panicking host fails the one call.
func (b *bridge) settle(f *flight) (r registry.Result) {
	r = f.staged.Commit()
	if f.d == nil {
		return r // an unknown tool was never shown
	}
	defer func() {
		if rec := recover(); rec != nil {
			b.log.Error("code mode host panicked finishing a sub-call", "subCall", f.c.ID, "panic", rec, "stack", string(debug.Stack()))
			r = registry.ErrorResult(registry.CodeToolPanic, fmt.Sprintf("tool %q crashed: %v", f.c.Name, rec))
		}
	}()
	b.host.Finish(b.ctx, f.d, f.c, r)
	return r
}

// startNext starts the next queued call if it may start now: its start
// event, then validation and policy on the loop; then its body, on a
// goroutine for a concurrency-safe call that may overlap others, else
// right here.
func (b *bridge) startNext() bool {
	if len(b.queue) == 0 || b.ctx.Err() != nil {
		return false
	}
	if n := len(b.started); n > 0 && b.started[n-1].alone {
		return false // an exclusive call holds the barrier through its commit
	}
	if b.running >= b.max {
		// Nothing can start with the pool full: a safe call needs a slot,
		// any other call an empty lane. Classifying now would be wasted
		// (and re-done while it waits).
		return false
	}
	sc := b.queue[0]
	d := b.host.Lookup(sc.name)
	if d == nil {
		if len(b.started) > 0 {
			return false // its failure commits in order, like any outcome
		}
		b.queue = b.queue[1:]
		// The pipeline's answer for a nil tool: UNKNOWN_TOOL, no stage run.
		b.started = append(b.started, &flight{sc: sc, ended: true, staged: b.prepare(nil, b.call(sc))})
		return true
	}
	// Classification is read right before the start: a tool may change its
	// mind about these arguments between calls.
	// The arguments are decoded once, whatever the number of asks.
	c := b.call(sc)
	safe := d.ConcurrencySafe(c)
	if !safe && len(b.started) > 0 {
		return false // the barrier: wait for the calls before it to commit
	}
	b.queue = b.queue[1:]
	b.start(d, c)
	f := &flight{sc: sc, d: d, c: c, staged: b.prepare(d, c), alone: !safe}
	b.started = append(b.started, f)
	// A safe call with nothing else started and nothing queued has nothing
	// to overlap: the program cannot submit another call until some call
	// settles, and only this one can. It runs here, like an exclusive call.
	if !f.staged.Ready() || !safe || len(b.started) == 1 && len(b.queue) == 0 {
		b.dispatch(f)
		f.ended = true
		return true
	}
	b.running++
	b.inflight.Add(1)
	if b.workers < b.running {
		// Workers live for the run, so a body's deep stack is grown once
		// per worker, not once per call.
		b.workers++
		go b.work()
	}
	b.jobs <- f // never blocks: at most max bodies are outstanding
	return true
}

func (b *bridge) work() {
	for f := range b.jobs {
		b.dispatch(f)
		b.finished <- f
		b.inflight.Done()
		b.wake()
	}
}

// drain ends the run's calls once it is over (its context cancelled
// first): every started call is waited for and committed in order, so
// every event of the run lands before run_code returns, and queued ones
// are reported as abandoned. Outcomes go nowhere: the program is done.
func (b *bridge) drain(reason string) {
	b.inflight.Wait()
	close(b.jobs)
	b.collect()
	for _, f := range b.started {
		b.settle(f)
	}
	b.started = nil
	for _, sc := range b.queue {
		b.log.Debug(fmt.Sprintf("run_code run is over (%s); %s tool call abandoned", reason, sc.name), "subCall", sc.id)
	}
	b.queue = nil
}

// call is sc's call, made once.
func (b *bridge) call(sc *subCall) *registry.Call {
	if sc.c == nil {
		p := b.parent
		sc.c = &registry.Call{ID: sc.id, Name: sc.name, Parent: p.ID, Args: sc.args, Cwd: p.Cwd, Roots: p.Roots, Files: p.Files, Jobs: p.Jobs,
			Rules: p.Rules, Memo: p.Memo}
	}
	return sc.c
}

// start, prepare and dispatch contain a panicking host or pipeline stage:
// a bad host fails the one call, never the run or the process.
func (b *bridge) start(d *registry.Def, c *registry.Call) {
	defer func() {
		if rec := recover(); rec != nil {
			b.log.Error("code mode host panicked starting a sub-call", "subCall", c.ID, "panic", rec, "stack", string(debug.Stack()))
		}
	}()
	b.host.Start(b.ctx, d, c)
}

func (b *bridge) prepare(d *registry.Def, c *registry.Call) *pipeline.Staged {
	return b.pipe.Prepare(b.ctx, d, c)
}

func (b *bridge) dispatch(f *flight) {
	f.staged.Dispatch()
}
