package pipeline

import (
	"context"
	"fmt"
	"sync"

	"github.com/acp-bridge/acp-bridge/registry"
)

// Resolver finds the tool a direct model call names; registry.Scope is one.
// An error (UNKNOWN_TOOL) becomes the call's result.
type Resolver interface {
	Resolve(name string) (*registry.Def, error)
}

// Hooks let the caller record a batch's calls in model order.
type Hooks struct {
	// Logged is called when call i is about to enter the pipeline (its card
	// goes up). All calls of a parallel group are logged before any of them
	// runs; any other call is logged only when its turn comes. A call of a
	// known tool carries its decoded input then (registry.Call.Decoded).
	Logged func(i int, c *registry.Call)
	// Done is called with call i's final result, strictly in model order.
	Done func(i int, c *registry.Call, r registry.Result)
}

// ExecuteBatch runs one model step's calls and returns their results in
// model order. Consecutive calls whose tools report ConcurrencySafe form a
// group whose bodies overlap, at most MaxParallel at a time; any other call
// (an unknown tool included) is a barrier that runs alone. Only dispatch and
// the bodies overlap: the policy stages run one call at a time in model
// order, and so do post-execute, finalize, observers and Done. Every started
// body is waited for before ExecuteBatch returns, cancelled or not.
func (p *Pipeline) ExecuteBatch(ctx context.Context, res Resolver, calls []*registry.Call, h Hooks) []registry.Result {
	results := make([]registry.Result, len(calls))
	for i := 0; i < len(calls); {
		d, err := resolve(res, calls[i].Name)
		if err != nil {
			p.hook("logged", func() { h.logged(i, calls[i]) })
			results[i] = errorResult(err, registry.CodeUnknownTool)
			if ctx.Err() != nil {
				// A cancelled call is ABORTED_BEFORE_DISPATCH before its
				// name is judged: the seed checks cancellation before the
				// code-mode rejection (a visible tool called directly in
				// code mode), and an unknown name is no more use to a
				// model whose turn was cancelled.
				results[i] = abortedBeforeDispatch()
			}
			p.hook("done", func() { h.done(i, calls[i], results[i]) })
			i++
			continue
		}
		// The call's input is decoded here, once (Def.Input), before its
		// card goes up: the hooks, the policy and the body share it.
		if in := d.Input(calls[i]); p.maxParallel == 1 || !in.ConcurrencySafe() {
			p.hook("logged", func() { h.logged(i, calls[i]) })
			results[i] = p.Execute(ctx, d, calls[i])
			p.hook("done", func() { h.done(i, calls[i], results[i]) })
			i++
			continue
		}
		defs := []*registry.Def{d}
		j := i + 1
		for ; j < len(calls); j++ {
			dj, err := resolve(res, calls[j].Name)
			if err != nil || !dj.ConcurrencySafe(calls[j]) {
				break
			}
			defs = append(defs, dj)
		}
		p.group(ctx, i, defs, calls[i:j], results[i:j], h)
		i = j
	}
	return results
}

// group runs one parallel group. A driver goroutine prepares the calls in
// model order and hands each to a free worker; this goroutine commits the
// results in model order as they become ready. The workers are long-lived
// for the group, so a body's deep stack is grown once per worker rather
// than once per call.
func (p *Pipeline) group(ctx context.Context, base int, defs []*registry.Def, calls []*registry.Call, results []registry.Result, h Hooks) {
	for k, c := range calls {
		p.hook("logged", func() { h.logged(base+k, c) })
	}
	n := len(calls)
	ready := make(chan int, n) // never blocks a sender: each call is ready once
	jobs := make(chan int)     // unbuffered: a handoff waits for an idle worker, which is the bound
	staged := make([]*Staged, n)
	var wg sync.WaitGroup
	for range min(p.maxParallel, n) {
		wg.Go(func() {
			for k := range jobs {
				staged[k].Dispatch()
				ready <- k
			}
		})
	}
	wg.Go(func() {
		defer close(jobs)
		for k, c := range calls {
			s := p.Prepare(ctx, defs[k], c)
			staged[k] = s
			if !s.Ready() {
				ready <- k
				continue
			}
			jobs <- k
		}
	})
	finished := make([]bool, n)
	for next := 0; next < n; {
		finished[<-ready] = true
		for ; next < n && finished[next]; next++ {
			results[next] = staged[next].Commit()
			p.hook("done", func() { h.done(base+next, calls[next], results[next]) })
		}
	}
	wg.Wait()
}

// resolve asks the resolver, treating a nil definition as unknown.
func resolve(res Resolver, name string) (*registry.Def, error) {
	d, err := res.Resolve(name)
	if err == nil && d == nil {
		err = registry.Errorf(registry.CodeUnknownTool, fmt.Sprintf("unknown tool %q", name))
	}
	return d, err
}

func (h Hooks) logged(i int, c *registry.Call) {
	if h.Logged != nil {
		h.Logged(i, c)
	}
}

func (h Hooks) done(i int, c *registry.Call, r registry.Result) {
	if h.Done != nil {
		h.Done(i, c, r)
	}
}

// hook runs a caller hook, containing a panic so the batch still drains.
func (p *Pipeline) hook(which string, f func()) {
	defer func() {
		if rec := recover(); rec != nil {
			p.log.Error("batch hook panicked", "hook", which, "panic", rec)
		}
	}()
	f()
}
