package codemode

import (
	"context"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
)

// noArgs takes an optional number, so a benchmark can give every call
// different arguments.
type noArgs struct {
	I int `json:"i,omitempty"`
}

func benchHost(b *testing.B, safe bool) Host {
	reg := registry.New()
	t := registry.Tool[noArgs, string]{Name: "noop",
		Run: func(context.Context, *registry.Call, noArgs) (string, error) { return "ok", nil }}
	if safe {
		t.ConcurrencySafe = func(noArgs) bool { return true }
	}
	registry.MustAdd(reg, t)
	return &testHost{Pipe: pipeline.New(nil), Set: reg.NewScope()}
}

// BenchmarkRunCold is one run_code of a trivial program from source: the
// esbuild transform, a fresh goja runtime with console and bindings, and
// the run.
func BenchmarkRunCold(b *testing.B) {
	h := benchHost(b, false)
	r := NewRunner(nil)
	parent := &registry.Call{ID: "p"}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		out, err := r.Run(b.Context(), parent, `const x: number = 41; return x + 1`, h)
		if err != nil || string(out.Result) != "42" {
			b.Fatal(out, err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkStrip is the esbuild part of a cold run.
func BenchmarkStrip(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := strip(`const x: number = 41; return x + 1`); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSubCalls is a program making 1,000 awaited sub-calls to a no-op
// tool, each through the whole pipeline; ns/subcall is the overhead of one.
func BenchmarkSubCalls(b *testing.B) {
	for _, c := range []struct {
		name string
		safe bool
		code string
	}{
		{"sequential", false, `for (let i = 0; i < 1000; i++) await tools.noop({}); return 1`},
		{"sequential-safe", true, `for (let i = 0; i < 1000; i++) await tools.noop({}); return 1`},
		{"parallel-safe", true, `await Promise.all(Array.from({length: 1000}, () => tools.noop({}))); return 1`},
		// Distinct arguments per call, as real fan-out has: nothing is
		// shared between the calls' validations.
		{"sequential-distinct", false, `for (let i = 0; i < 1000; i++) await tools.noop({i}); return 1`},
		{"parallel-safe-distinct", true, `await Promise.all(Array.from({length: 1000}, (_, i) => tools.noop({i}))); return 1`},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := benchHost(b, c.safe)
			r := NewRunner(nil)
			parent := &registry.Call{ID: "p"}
			b.ReportAllocs()
			var total time.Duration
			cpu0 := cpuTime()
			for b.Loop() {
				start := time.Now()
				if _, err := r.Run(b.Context(), parent, c.code, h); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N)/1000, "ns/subcall")
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/1000, "cpu-ns/subcall")
		})
	}
}
