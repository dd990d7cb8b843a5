//go:build unix

package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
)

type noopArgs struct {
	Path string `json:"path,omitempty"`
}

// benchPipeline populates every stage: a gate, a guard, the shipped
// middleware (retry, timeout), a post-execute hook and an observer.
func benchPipeline(b *testing.B) (*Pipeline, *registry.Scope, *int64) {
	r := registry.New()
	registry.MustAdd(r, registry.Tool[noopArgs, string]{
		Name:            "noop",
		Run:             func(context.Context, *registry.Call, noopArgs) (string, error) { return "ok", nil },
		ConcurrencySafe: func(noopArgs) bool { return true },
	})
	var observed int64
	p := New(&Options{
		Gates:      []Gate{func(context.Context, *registry.Def, *registry.Call) Decision { return Decision{Kind: Allow} }},
		Guards:     []Guard{func(context.Context, *registry.Def, *registry.Call) string { return "" }},
		Middleware: []Middleware{Retry(), Timeout()},
		PostExecute: []PostHook{func(context.Context, *registry.Def, *registry.Call, registry.Result) PostDecision {
			return PostDecision{}
		}},
		Observers: []Observer{func(*registry.Def, *registry.Call, registry.Result) { observed++ }},
	})
	return p, r.NewScope(), &observed
}

// One call of a no-op tool through the whole pipeline: argument validation
// and every stage, including an observer.
func BenchmarkExecuteNoop(b *testing.B) {
	p, s, observed := benchPipeline(b)
	d := s.Get("noop")
	args := distinctArgs(1024)
	ctx := context.Background()
	b.ReportAllocs()
	cpu := cpuTime()
	n := 0
	for b.Loop() {
		// A new call each time, as from a model, with arguments unlike the
		// last call's: nothing one call validated or decoded carries over.
		c := &registry.Call{ID: "c", Name: "noop", Args: args[n%len(args)]}
		n++
		if r := p.Execute(ctx, d, c); r.IsError {
			b.Fatal(r.Text())
		}
	}
	reportCPU(b, cpu, 1)
	if *observed == 0 {
		b.Fatal("the observer never ran")
	}
}

// A parallel group of 100 concurrency-safe no-op calls through
// ExecuteBatch, with both hooks; reported per call as well as per batch.
func BenchmarkExecuteBatch100Safe(b *testing.B) {
	p, s, _ := benchPipeline(b)
	calls := make([]*registry.Call, 100)
	ids := make([]string, len(calls))
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	args := distinctArgs(len(calls))
	var logged, done int
	h := Hooks{
		Logged: func(int, *registry.Call) { logged++ },
		Done:   func(int, *registry.Call, registry.Result) { done++ },
	}
	ctx := context.Background()
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		for i := range calls {
			calls[i] = &registry.Call{ID: ids[i], Name: "noop", Args: args[i]} // new calls, as from a model
		}
		res := p.ExecuteBatch(ctx, s, calls, h)
		if res[99].IsError {
			b.Fatal(res[99].Text())
		}
	}
	b.StopTimer()
	reportCPU(b, cpu, len(calls))
	if logged != done || done%100 != 0 {
		b.Fatalf("logged %d, done %d", logged, done)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(calls)), "ns/call")
}

// distinctArgs are n argument texts, each unlike the one before it, as a
// model's calls are.
func distinctArgs(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"path":"f%d.go"}`, i))
	}
	return out
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the CPU time spent per call since start. On a machine
// shared with other work, ns/op counts time spent waiting for a core;
// cpu-ns/call counts only the work done (all goroutines, GC included).
func reportCPU(b *testing.B, start time.Duration, callsPerOp int) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N*callsPerOp), "cpu-ns/call")
}
