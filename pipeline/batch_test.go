package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
)

// batchEnv is a scope with a safe tool ("s": concurrency-safe unless its x
// is "unsafe") and an exclusive one ("x"), whose bodies sleep for the
// duration in x and track how many run at once.
type batchEnv struct {
	scope   *registry.Scope
	running atomic.Int32
	peak    atomic.Int32
	log     recorder
}

func newBatchEnv(t testing.TB) *batchEnv {
	e := &batchEnv{}
	r := registry.New()
	body := func(name string) func(ctx context.Context, c *registry.Call, in args) (string, error) {
		return func(ctx context.Context, c *registry.Call, in args) (string, error) {
			n := e.running.Add(1)
			for p := e.peak.Load(); n > p && !e.peak.CompareAndSwap(p, n); p = e.peak.Load() {
			}
			defer e.running.Add(-1)
			e.log.add("start " + c.ID)
			if d, err := time.ParseDuration(in.X); err == nil {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			return name + ":" + c.ID, nil
		}
	}
	for _, tool := range []registry.Tool[args, string]{
		{Name: "s", Run: body("s"), ConcurrencySafe: func(in args) bool { return in.X != "unsafe" }},
		{Name: "x", Run: body("x")},
	} {
		if _, err := registry.Add(r, tool); err != nil {
			t.Fatal(err)
		}
	}
	e.scope = r.NewScope()
	return e
}

// calls builds calls from "name:x" specs, with ids 0, 1, 2, ...
func calls(specs ...string) []*registry.Call {
	out := make([]*registry.Call, len(specs))
	for i, s := range specs {
		name, x, _ := strings.Cut(s, ":")
		out[i] = &registry.Call{ID: fmt.Sprint(i), Name: name, Args: json.RawMessage(fmt.Sprintf(`{"x":%q}`, x))}
	}
	return out
}

func (e *batchEnv) hooks() Hooks {
	return Hooks{
		Logged: func(i int, c *registry.Call) { e.log.add(fmt.Sprintf("logged %d", i)) },
		Done:   func(i int, c *registry.Call, r registry.Result) { e.log.add(fmt.Sprintf("done %d %s", i, r.Text())) },
	}
}

func TestBatchOrderAndBarriers(t *testing.T) {
	tests := []struct {
		name  string
		specs []string
		max   int
		want  []string
		peak  int32
	}{
		{name: "a group, a barrier, a group",
			// Later calls in a group finish first; results still come in model order.
			specs: []string{"s:30ms", "s:20ms", "s:10ms", "x:1ms", "s:5ms", "s:1ms"},
			want: []string{"logged 0", "logged 1", "logged 2", "start 0", "start 1", "start 2", "done 0 s:0", "done 1 s:1", "done 2 s:2",
				"logged 3", "start 3", "done 3 x:3",
				"logged 4", "logged 5", "start 4", "start 5", "done 4 s:4", "done 5 s:5"},
			peak: 3},
		{name: "unsafe arguments are a barrier",
			specs: []string{"s:1ms", "s:unsafe", "s:1ms"},
			want:  []string{"logged 0", "start 0", "done 0 s:0", "logged 1", "start 1", "done 1 s:1", "logged 2", "start 2", "done 2 s:2"},
			peak:  1},
		{name: "an unknown tool is a barrier",
			specs: []string{"s:1ms", "s:1ms", "nope:", "s:1ms"},
			want: []string{"logged 0", "logged 1", "start 0", "start 1", "done 0 s:0", "done 1 s:1",
				"logged 2", `done 2 Error: unknown tool "nope"; available tools: s, x`, "logged 3", "start 3", "done 3 s:3"},
			peak: 2},
		{name: "MaxParallel 1 runs one at a time",
			specs: []string{"s:1ms", "s:1ms"}, max: 1,
			want: []string{"logged 0", "start 0", "done 0 s:0", "logged 1", "start 1", "done 1 s:1"},
			peak: 1},
		{name: "invalid arguments run alone and fail",
			specs: []string{"s:1ms", "x:", "s:1ms"},
			want:  []string{"logged 0", "start 0", "done 0 s:0", "logged 1", "start 1", "done 1 x:1", "logged 2", "start 2", "done 2 s:2"},
			peak:  1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newBatchEnv(t)
				res := New(&Options{MaxParallel: tt.max}).ExecuteBatch(t.Context(), e.scope, calls(tt.specs...), e.hooks())
				if got := sortStarts(e.log.get()); !slices.Equal(got, tt.want) {
					t.Errorf("events\n got %q\nwant %q", got, tt.want)
				}
				if e.peak.Load() != tt.peak {
					t.Errorf("peak concurrency %d, want %d", e.peak.Load(), tt.peak)
				}
				if len(res) != len(tt.specs) {
					t.Fatalf("%d results for %d calls", len(res), len(tt.specs))
				}
				for i, r := range res {
					if want := fmt.Sprintf("done %d %s", i, r.Text()); !slices.Contains(e.log.get(), want) {
						t.Errorf("result %d %q was not reported through Done", i, r.Text())
					}
				}
			})
		})
	}
}

// sortStarts sorts each run of consecutive body starts: the bodies of a
// group start in whatever order the scheduler picks.
func sortStarts(events []string) []string {
	for i := 0; i < len(events); {
		j := i
		for j < len(events) && strings.HasPrefix(events[j], "start ") {
			j++
		}
		slices.Sort(events[i:j])
		i = max(j, i+1)
	}
	return events
}

func TestBatchBound(t *testing.T) {
	for _, max := range []int{0, 1, 4, 30} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newBatchEnv(t)
				specs := make([]string, 25)
				for i := range specs {
					specs[i] = fmt.Sprintf("s:%dms", 1+i%3)
				}
				res := New(&Options{MaxParallel: max}).ExecuteBatch(t.Context(), e.scope, calls(specs...), Hooks{})
				want := int32(max)
				switch max {
				case 0:
					want = DefaultMaxParallel
				case 30:
					want = 25
				}
				if e.peak.Load() != want {
					t.Fatalf("peak %d, want %d", e.peak.Load(), want)
				}
				for i, r := range res {
					if r.Text() != fmt.Sprintf("s:%d", i) {
						t.Fatalf("result %d = %q", i, r.Text())
					}
				}
			})
		})
	}
}

// Policy runs one call at a time in model order even inside a group; the
// approvals of a group never overlap.
func TestBatchPolicyInModelOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newBatchEnv(t)
		var asking atomic.Int32
		var order recorder
		p := New(&Options{
			Gates: []Gate{func(_ context.Context, _ *registry.Def, c *registry.Call) Decision {
				order.add("gate " + c.ID)
				return Decision{Kind: Ask}
			}},
			Approver: approverFunc(func(_ context.Context, _ *registry.Def, c *registry.Call, _ string) (Outcome, error) {
				if asking.Add(1) > 1 {
					t.Error("two approvals at once")
				}
				defer asking.Add(-1)
				time.Sleep(time.Millisecond) // the user takes a moment
				if c.ID == "2" {
					return Rejected, nil
				}
				return Approved, nil
			}),
			PostExecute: []PostHook{func(_ context.Context, _ *registry.Def, c *registry.Call, _ registry.Result) PostDecision {
				order.add("post " + c.ID)
				return PostDecision{}
			}},
		})
		res := p.ExecuteBatch(t.Context(), e.scope, calls("s:5ms", "s:1ms", "s:1ms", "s:1ms"), Hooks{})
		gates, posts := []string{}, []string{}
		for _, s := range order.get() {
			if strings.HasPrefix(s, "gate") {
				gates = append(gates, s)
			} else {
				posts = append(posts, s)
			}
		}
		if !slices.Equal(gates, []string{"gate 0", "gate 1", "gate 2", "gate 3"}) || !slices.Equal(posts, []string{"post 0", "post 1", "post 2", "post 3"}) {
			t.Fatalf("policy order %v", order.get())
		}
		if res[2].Code != "REJECTED" || res[3].Text() != "s:3" {
			t.Fatalf("results %+v", res)
		}
		// Call 0's 5ms body overlapped the approvals of the calls after it.
		if e.peak.Load() < 2 {
			t.Fatalf("bodies did not overlap the later approvals (peak %d)", e.peak.Load())
		}
	})
}

// Cancelling mid-group: started bodies are drained, unstarted calls fail
// before dispatch, every call is still reported in order.
func TestBatchCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newBatchEnv(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var done []string
		p := New(&Options{MaxParallel: 2, Gates: []Gate{func(_ context.Context, _ *registry.Def, c *registry.Call) Decision {
			if c.ID == "2" {
				// The user cancels while call 2 is being prepared, once the
				// bodies of 0 and 1 run: a body not started by then never
				// starts (ABORTED_BEFORE_DISPATCH).
				synctest.Wait()
				cancel()
			}
			return Decision{}
		}}})
		res := p.ExecuteBatch(ctx, e.scope, calls("s:1h", "s:1h", "s:1ms", "s:1ms", "x:1ms"), Hooks{
			Done: func(i int, _ *registry.Call, r registry.Result) {
				done = append(done, fmt.Sprintf("%d %s", i, r.Code))
			},
		})
		if n := e.running.Load(); n != 0 {
			t.Fatalf("%d bodies still running after ExecuteBatch returned", n)
		}
		want := []string{"0 ABORTED", "1 ABORTED", "2 ABORTED_BEFORE_DISPATCH", "3 ABORTED_BEFORE_DISPATCH", "4 ABORTED_BEFORE_DISPATCH"}
		if !slices.Equal(done, want) {
			t.Fatalf("done %v, want %v", done, want)
		}
		if res[0].Text() != "Error: tool call aborted" || res[4].Text() != "Error: tool call aborted before dispatch" {
			t.Fatalf("texts %q %q", res[0].Text(), res[4].Text())
		}
	})
}

func TestBatchHookPanicsAreContained(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newBatchEnv(t)
		res := New(nil).ExecuteBatch(t.Context(), e.scope, calls("s:1ms", "s:1ms", "x:1ms"), Hooks{
			Logged: func(int, *registry.Call) { panic("logged bug") },
			Done:   func(int, *registry.Call, registry.Result) { panic("done bug") },
		})
		if res[0].Text() != "s:0" || res[2].Text() != "x:2" || e.running.Load() != 0 {
			t.Fatalf("results %+v", res)
		}
	})
}

func TestBatchCodeModeRefusal(t *testing.T) {
	r := registry.New()
	registry.MustAdd(r, registry.Tool[args, string]{Name: "read", Run: func(context.Context, *registry.Call, args) (string, error) { return "", nil }})
	if err := registry.AddCodeTool(r, registry.Tool[args, string]{Run: func(context.Context, *registry.Call, args) (string, error) { return "ran", nil }}); err != nil {
		t.Fatal(err)
	}
	s := r.NewScope()
	s.SetMode(registry.Code)
	res := New(nil).ExecuteBatch(t.Context(), s, []*registry.Call{{Name: "read", Args: []byte(`{}`)}, {Name: "run_code", Args: []byte(`{}`)}}, Hooks{})
	if res[0].Code != "UNKNOWN_TOOL" || res[0].Text() != "Error: only `run_code` is callable directly — call `read` from inside a `run_code` program instead" {
		t.Fatalf("%+v", res[0])
	}
	if res[1].Text() != "ran" {
		t.Fatalf("%+v", res[1])
	}
}

type nilResolver struct{}

func (nilResolver) Resolve(string) (*registry.Def, error) { return nil, nil }

func TestBatchNilDefinitionIsUnknown(t *testing.T) {
	res := New(nil).ExecuteBatch(t.Context(), nilResolver{}, calls("ghost:"), Hooks{})
	if res[0].Code != "UNKNOWN_TOOL" || res[0].Text() != `Error: unknown tool "ghost"` {
		t.Fatalf("%+v", res[0])
	}
}

func TestBatchConcurrentBatches(t *testing.T) {
	e := newBatchEnv(t)
	p := New(nil)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			res := p.ExecuteBatch(t.Context(), e.scope, calls("s:", "s:", "x:", "s:"), Hooks{})
			for i, r := range res {
				if !strings.HasSuffix(r.Text(), fmt.Sprintf(":%d", i)) {
					t.Errorf("result %d = %q", i, r.Text())
				}
			}
		})
	}
	wg.Wait()
}
