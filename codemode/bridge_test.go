package codemode

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
)

// Sub-ids follow submission order; consecutive safe calls overlap up to
// MaxParallel; an exclusive call waits for the pool to drain, runs alone,
// and later calls wait for it.
func TestSchedulingOrder(t *testing.T) {
	cases := []struct {
		name        string
		maxParallel int
		code        string
		wantStarts  []string // ids in start order
		wantPeak    int      // most calls running at once
		exclusiveID []string // calls that must have run alone
	}{
		{"safe calls overlap", 10,
			`return await Promise.all([1, 2, 3, 4].map(i => tools.sleep({v: 40})))`,
			[]string{"1", "2", "3", "4"}, 4, nil},
		{"pool bound", 2,
			`return await Promise.all([1, 2, 3, 4].map(i => tools.sleep({v: 40})))`,
			[]string{"1", "2", "3", "4"}, 2, nil},
		{"MaxParallel 1 is serial", 1,
			`return await Promise.all([1, 2, 3].map(i => tools.sleep({v: 20})))`,
			[]string{"1", "2", "3"}, 1, nil},
		{"exclusive is a barrier", 10,
			`return await Promise.all([tools.sleep({v: 40}), tools.sleep({v: 40}), tools.sleep({v: 1010}), tools.sleep({v: 5}), tools.sleep({v: 1005})])`,
			[]string{"1", "2", "3", "4", "5"}, 2, []string{"3", "5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Bodies are what overlap: a middleware counts them. A result
			// commits in submission order, possibly after later bodies ran.
			var running, peak atomic.Int32
			var mu sync.Mutex
			var starts []string
			alone := map[string]bool{}
			h := newRecorder(testRegistry(t))
			h.OnStart = func(c *registry.Call) {
				mu.Lock()
				starts = append(starts, strings.TrimPrefix(c.ID, "p:code:"))
				mu.Unlock()
			}
			h.Pipe = pipeline.New(&pipeline.Options{Middleware: []pipeline.Middleware{func(_ *registry.Def, next pipeline.Next) pipeline.Next {
				return func(ctx context.Context, c *registry.Call) registry.Result {
					n := running.Add(1)
					for {
						p := peak.Load()
						if n <= p || peak.CompareAndSwap(p, n) {
							break
						}
					}
					id := strings.TrimPrefix(c.ID, "p:code:")
					r := next(ctx, c)
					// A call that ran alone must still be alone when it ends.
					mu.Lock()
					alone[id] = n == 1 && running.Load() == 1
					mu.Unlock()
					running.Add(-1)
					return r
				}
			}}})
			r := NewRunner(&Options{Limits: Limits{MaxParallel: c.maxParallel}, Values: jsonValues{}})
			if _, err := r.Run(t.Context(), &registry.Call{ID: "p"}, c.code, h); err != nil {
				t.Fatal(err)
			}
			if strings.Join(starts, ",") != strings.Join(c.wantStarts, ",") {
				t.Errorf("start order = %v, want %v", starts, c.wantStarts)
			}
			if int(peak.Load()) != c.wantPeak {
				t.Errorf("peak concurrency = %d, want %d", peak.Load(), c.wantPeak)
			}
			for _, id := range c.exclusiveID {
				if !alone[id] {
					t.Errorf("exclusive call %s overlapped another", id)
				}
			}
		})
	}
}

// Sub-calls inherit the parent's workspace and name it as their parent.
func TestSubCallIdentity(t *testing.T) {
	h := newRecorder(testRegistry(t))
	parent := &registry.Call{ID: "call_9", Cwd: "/w", Roots: []string{"/w", "/x"}}
	_, err := NewRunner(nil).Run(t.Context(), parent, `await tools.echo({v: 1}); await tools["my-tool"]({v: 2})`, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.calls) != 2 {
		t.Fatalf("calls = %d", len(h.calls))
	}
	for i, c := range h.calls {
		want := []string{"call_9:code:1", "call_9:code:2"}[i]
		if c.ID != want || c.Parent != "call_9" || c.Cwd != "/w" || len(c.Roots) != 2 {
			t.Errorf("call %d = %+v, want id %s", i, c, want)
		}
	}
}

// Waiting on tools costs no compute budget.
func TestAwaitingIsNotCompute(t *testing.T) {
	start := time.Now()
	_, err, _ := runCode(t, Limits{Compute: 150 * time.Millisecond}, `for (let i = 0; i < 4; i++) await tools.sleep({v: 60}); return 1`)
	if err != nil {
		t.Fatalf("err = %v after %s", err, time.Since(start))
	}
}
