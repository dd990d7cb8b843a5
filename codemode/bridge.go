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

// bridge dispatches a run's binding calls. Calls start strictly in
// submission order from one driver goroutine; consecutive concurrency-safe
// calls overlap up to max, and any other call waits for the pool to drain,
// runs alone and holds the barrier until it has finished (reference/dsh.md §4.4).
type bridge struct {
	ctx    context.Context // cancelled when the run settles
	host   Host
	parent *registry.Call
	max    int
	log    *slog.Logger

	mu     sync.Mutex
	queue  []*subCall
	n      int // sub-calls numbered so far
	closed bool
	wake   chan struct{}

	driver   sync.WaitGroup // the driver goroutine
	inflight sync.WaitGroup // started sub-calls
}

// subCall is one binding call waiting to start.
type subCall struct {
	id   string
	name string
	args json.RawMessage
	// done receives the outcome; it is called exactly once, from any
	// goroutine, unless the call was abandoned before it started.
	done func(d *registry.Def, r registry.Result)
}

func newBridge(ctx context.Context, host Host, parent *registry.Call, max int, log *slog.Logger) *bridge {
	b := &bridge{ctx: ctx, host: host, parent: parent, max: max, log: log, wake: make(chan struct{}, 1)}
	b.driver.Add(1)
	go b.drive()
	return b
}

// submit queues a call and returns its sub-id. Numbers follow submission
// order, not start or completion order.
func (b *bridge) submit(name string, args json.RawMessage, done func(*registry.Def, registry.Result)) string {
	b.mu.Lock()
	b.n++
	sc := &subCall{id: b.parent.ID + ":code:" + strconv.Itoa(b.n), name: name, args: args, done: done}
	b.queue = append(b.queue, sc)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
	return sc.id
}

// drain stops taking calls and waits for every started one to finish, so
// every event of the run lands before run_code returns. The run's context
// must already be cancelled (or every call settled), or this waits for them.
func (b *bridge) drain(reason string) {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
	b.driver.Wait()
	b.inflight.Wait()
	b.mu.Lock()
	left := b.queue
	b.queue = nil
	b.mu.Unlock()
	for _, sc := range left {
		b.log.Debug(fmt.Sprintf("run_code run is over (%s); %s tool call abandoned", reason, sc.name), "subCall", sc.id)
	}
}

// next waits for the next queued call; nil when the run is over.
func (b *bridge) next() *subCall {
	for {
		b.mu.Lock()
		if b.closed || b.ctx.Err() != nil {
			b.mu.Unlock()
			return nil
		}
		if len(b.queue) > 0 {
			sc := b.queue[0]
			b.queue = b.queue[1:]
			b.mu.Unlock()
			return sc
		}
		b.mu.Unlock()
		select {
		case <-b.wake:
		case <-b.ctx.Done():
		}
	}
}

func (b *bridge) drive() {
	defer b.driver.Done()
	slots := make(chan struct{}, b.max)
	for {
		sc := b.next()
		if sc == nil {
			return
		}
		d := b.host.Lookup(sc.name)
		if d == nil {
			sc.done(nil, registry.ErrorResult("UNKNOWN_TOOL", fmt.Sprintf("unknown tool %q", sc.name)))
			continue
		}
		// Classification is read right before the start: a tool may change
		// its mind about these arguments between calls.
		if safe(d, sc.args) {
			select {
			case slots <- struct{}{}:
			case <-b.ctx.Done():
				b.requeue(sc)
				return
			}
			c := b.call(sc)
			b.start(d, c)
			b.inflight.Add(1)
			go func() {
				defer b.inflight.Done()
				r := b.execute(d, c)
				<-slots
				sc.done(d, r)
			}()
			continue
		}
		b.inflight.Wait()
		if b.ctx.Err() != nil {
			b.requeue(sc)
			return
		}
		c := b.call(sc)
		b.start(d, c)
		sc.done(d, b.execute(d, c))
	}
}

// requeue puts back a call the driver took but could not start, so drain
// reports it as abandoned.
func (b *bridge) requeue(sc *subCall) {
	b.mu.Lock()
	b.queue = append([]*subCall{sc}, b.queue...)
	b.mu.Unlock()
}

func (b *bridge) call(sc *subCall) *registry.Call {
	p := b.parent
	return &registry.Call{ID: sc.id, Name: sc.name, Parent: p.ID, Args: sc.args, Cwd: p.Cwd, Roots: p.Roots, Files: p.Files}
}

func safe(d *registry.Def, args json.RawMessage) bool { return d.ConcurrencySafe(args) }

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
