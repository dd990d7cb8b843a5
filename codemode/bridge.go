package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"

	"github.com/acp-bridge/acp-bridge/registry"
)

// bridge dispatches a run's binding calls (reference/dsh.md §4.4). It is
// driven by the run's loop goroutine, between JavaScript entries, so calls
// start strictly in submission order without a goroutine of its own.
// Consecutive concurrency-safe calls overlap on goroutines up to max; any
// other call waits for them to finish, then runs alone, on the loop itself:
// the program cannot do anything but wait for it, and a sequence of awaited
// calls then costs no goroutine switch at all.
type bridge struct {
	ctx    context.Context // cancelled when the run settles
	host   Host
	parent *registry.Call
	max    int
	log    *slog.Logger

	// Owned by the loop goroutine.
	queue   []*subCall
	n       int // sub-calls numbered so far
	running int // concurrency-safe calls started and not yet settled on the loop

	inflight sync.WaitGroup // calls running on their own goroutine
}

// subCall is one binding call waiting to start.
type subCall struct {
	id   string
	name string
	args json.RawMessage
	// done receives the outcome, exactly once, unless the call was abandoned
	// before it started. It is called on the loop for calls run there and
	// from the call's goroutine for concurrent ones.
	done func(d *registry.Def, r registry.Result, concurrent bool)
}

func newBridge(ctx context.Context, host Host, parent *registry.Call, max int, log *slog.Logger) *bridge {
	return &bridge{ctx: ctx, host: host, parent: parent, max: max, log: log}
}

// submit queues a call and returns its sub-id. Numbers follow submission
// order, not start or completion order.
func (b *bridge) submit(name string, args json.RawMessage, done func(*registry.Def, registry.Result, bool)) string {
	b.n++
	sc := &subCall{id: b.parent.ID + ":code:" + strconv.Itoa(b.n), name: name, args: args, done: done}
	b.queue = append(b.queue, sc)
	return sc.id
}

// settled tells the bridge a concurrent call's outcome reached the loop,
// which frees its slot in the pool.
func (b *bridge) settled() { b.running-- }

// pump starts every queued call that may start now, in order. It reports
// whether it did anything, so the loop goes round again before waiting.
func (b *bridge) pump() (progressed bool) {
	for len(b.queue) > 0 && b.ctx.Err() == nil {
		sc := b.queue[0]
		d := b.host.Lookup(sc.name)
		if d == nil {
			b.queue = b.queue[1:]
			sc.done(nil, registry.ErrorResult("UNKNOWN_TOOL", fmt.Sprintf("unknown tool %q", sc.name)), false)
			return true
		}
		// Classification is read right before the start: a tool may change
		// its mind about these arguments between calls.
		// A safe call alone in the queue with nothing running has nothing to
		// overlap: the program cannot submit another call until some call
		// settles, and only this one can. It runs on the loop, like an
		// exclusive call, and a chain of awaited reads costs no goroutine switch.
		if d.ConcurrencySafe(sc.args) && (b.running > 0 || len(b.queue) > 1) {
			if b.running >= b.max {
				return progressed
			}
			b.queue = b.queue[1:]
			b.running++
			c := b.call(sc)
			b.start(d, c)
			b.inflight.Add(1)
			go func() {
				defer b.inflight.Done()
				sc.done(d, b.execute(d, c), true)
			}()
			progressed = true
			continue
		}
		if b.running > 0 {
			return progressed // the barrier: wait for the pool to drain
		}
		b.queue = b.queue[1:]
		c := b.call(sc)
		b.start(d, c)
		sc.done(d, b.execute(d, c), false)
		return true // let the loop settle it before anything else starts
	}
	return progressed
}

// drain waits for every started call, so every event of the run lands
// before run_code returns, and reports the queued ones as abandoned. The
// run's context must be cancelled first, or this waits for the calls to end.
func (b *bridge) drain(reason string) {
	b.inflight.Wait()
	for _, sc := range b.queue {
		b.log.Debug(fmt.Sprintf("run_code run is over (%s); %s tool call abandoned", reason, sc.name), "subCall", sc.id)
	}
	b.queue = nil
}

func (b *bridge) call(sc *subCall) *registry.Call {
	p := b.parent
	return &registry.Call{ID: sc.id, Name: sc.name, Parent: p.ID, Args: sc.args, Cwd: p.Cwd, Roots: p.Roots, Files: p.Files}
}

// start and execute contain a panicking host: a bad host fails the one call,
// never the run or the process.
func (b *bridge) start(d *registry.Def, c *registry.Call) {
	defer func() {
		if rec := recover(); rec != nil {
			b.log.Error("code mode host panicked starting a sub-call", "subCall", c.ID, "panic", rec, "stack", string(debug.Stack()))
		}
	}()
	b.host.Start(b.ctx, d, c)
}

func (b *bridge) execute(d *registry.Def, c *registry.Call) (r registry.Result) {
	defer func() {
		if rec := recover(); rec != nil {
			b.log.Error("code mode host panicked running a sub-call", "subCall", c.ID, "panic", rec, "stack", string(debug.Stack()))
			r = registry.ErrorResult("TOOL_PANIC", fmt.Sprintf("tool %q crashed: %v", c.Name, rec))
		}
	}()
	return b.host.Execute(b.ctx, d, c)
}
