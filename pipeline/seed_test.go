package pipeline

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
)

// The tests in this file state the seed harness's pipeline behaviour: a
// cancelled call never runs or reports success, and the post-execute and
// finalize decisions of its article on the tool system.

// TestCancellationNeverRunsOrSucceeds: each case cancels at one point of
// the call and states what the body and the result must be.
func TestCancellationNeverRunsOrSucceeds(t *testing.T) {
	tests := []struct {
		name string
		// mw is the one middleware; cancel cancels the caller's context.
		mw   func(cancel context.CancelFunc) Middleware
		post func(cancel context.CancelFunc) PostHook
		// body runs as the tool; cancel is the caller's, so a case can
		// cancel once the body is known to run (not after a delay).
		body      func(ctx context.Context, cancel context.CancelFunc) (string, error)
		preCancel bool
		args      string // the call's arguments; {} when empty

		bodyRan bool
		stages  []string // post, observe
		code    string
		ctxs    []string
	}{
		{name: "cancelled before the pipeline: only the observers see it, once", preCancel: true,
			stages: []string{"observe"}, code: registry.CodeAbortedBeforeDispatch},
		{name: "cancelled before the pipeline with bad arguments: the decoding error wins", preCancel: true,
			args: `{"x":1}`, stages: []string{"observe"}, code: registry.CodeInvalidArgs},
		{name: "a middleware waits and is cancelled before next",
			mw: func(cancel context.CancelFunc) Middleware {
				return func(_ *registry.Def, next Next) Next {
					return func(ctx context.Context, c *registry.Call) registry.Result {
						cancel()
						<-ctx.Done()
						return next(ctx, c)
					}
				}
			},
			stages: []string{"post", "observe"}, code: registry.CodeAbortedBeforeDispatch},
		{name: "a middleware passes a context already done",
			mw: func(context.CancelFunc) Middleware {
				return func(_ *registry.Def, next Next) Next {
					return func(ctx context.Context, c *registry.Call) registry.Result {
						done, stop := context.WithCancel(context.Background())
						stop()
						return next(done, c)
					}
				}
			},
			stages: []string{"post", "observe"}, code: registry.CodeAbortedBeforeDispatch},
		{name: "a middleware swaps in its own context: the caller's cancellation still reaches the body",
			mw: func(context.CancelFunc) Middleware {
				return func(_ *registry.Def, next Next) Next {
					return func(_ context.Context, c *registry.Call) registry.Result {
						own, stop := context.WithTimeout(context.Background(), time.Hour)
						defer stop()
						return next(own, c)
					}
				}
			},
			// The caller cancels while the body runs: the body must see it
			// through the middleware's own context.
			body: func(ctx context.Context, cancel context.CancelFunc) (string, error) {
				cancel()
				<-ctx.Done()
				return "", ctx.Err()
			},
			bodyRan: true, stages: []string{"post", "observe"}, code: registry.CodeAborted},
		{name: "cancellation overtakes a middleware short-circuit",
			mw: func(cancel context.CancelFunc) Middleware {
				return func(_ *registry.Def, _ Next) Next {
					return func(context.Context, *registry.Call) registry.Result {
						cancel()
						return registry.Result{Content: []registry.Content{registry.Text("cached")}, Context: []string{"from cache"}}
					}
				}
			},
			stages: []string{"post", "observe"}, code: registry.CodeAbortedBeforeDispatch, ctxs: []string{"from cache"}},
		{name: "cancellation overtakes a late middleware success",
			mw: func(cancel context.CancelFunc) Middleware {
				return func(_ *registry.Def, next Next) Next {
					return func(ctx context.Context, c *registry.Call) registry.Result {
						r := next(ctx, c)
						cancel()
						return r
					}
				}
			},
			bodyRan: true, stages: []string{"post", "observe"}, code: registry.CodeAborted},
		{name: "cancellation overtakes a late post-execute success, context kept",
			post: func(cancel context.CancelFunc) PostHook {
				return func(context.Context, *registry.Def, *registry.Call, registry.Result) PostDecision {
					cancel()
					return PostDecision{Kind: Accept, Context: []string{"gathered"}}
				}
			},
			bodyRan: true, stages: []string{"post", "observe"}, code: registry.CodeAborted, ctxs: []string{"gathered"}},
		{name: "a failure is more specific and stands",
			post: func(cancel context.CancelFunc) PostHook {
				return func(context.Context, *registry.Def, *registry.Call, registry.Result) PostDecision {
					cancel()
					return PostDecision{Kind: Block, Context: []string{"why"}}
				}
			},
			bodyRan: true, stages: []string{"post", "observe"}, code: registry.CodeBlocked, ctxs: []string{"why"}},
		{name: "not cancelled: a success", bodyRan: true, stages: []string{"post", "observe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			rec := &recorder{}
			var ran atomic.Bool
			d := newDef(t, registry.Tool[args, string]{Run: func(ctx context.Context, _ *registry.Call, _ args) (string, error) {
				ran.Store(true)
				if tt.body != nil {
					return tt.body(ctx, cancel)
				}
				return "ok", nil
			}})
			o := &Options{Observers: []Observer{func(*registry.Def, *registry.Call, registry.Result) { rec.add("observe") }}}
			if tt.mw != nil {
				o.Middleware = []Middleware{tt.mw(cancel)}
			}
			post := PostHook(func(context.Context, *registry.Def, *registry.Call, registry.Result) PostDecision {
				return PostDecision{}
			})
			if tt.post != nil {
				post = tt.post(cancel)
			}
			o.PostExecute = []PostHook{func(ctx context.Context, d *registry.Def, c *registry.Call, r registry.Result) PostDecision {
				rec.add("post")
				return post(ctx, d, c, r)
			}}
			if tt.preCancel {
				cancel()
			}
			a := tt.args
			if a == "" {
				a = `{}`
			}
			r := New(o).Execute(ctx, d, call(a))
			if ran.Load() != tt.bodyRan {
				t.Errorf("body ran = %v, want %v", ran.Load(), tt.bodyRan)
			}
			if got := rec.get(); !slices.Equal(got, tt.stages) {
				t.Errorf("stages %v, want %v", got, tt.stages)
			}
			if r.Code != tt.code || r.IsError != (tt.code != "") {
				t.Errorf("result %q code %q, want code %q", r.Text(), r.Code, tt.code)
			}
			if !slices.Equal(r.Context, tt.ctxs) {
				t.Errorf("context %q, want %q", r.Context, tt.ctxs)
			}
		})
	}
}

type countOut struct {
	State string `json:"state" enum:"ok,failed"`
	N     int    `json:"n"`
}

func countDef(t testing.TB) *registry.Def {
	d, err := registry.Define(registry.Tool[args, countOut]{Name: "count",
		Run: func(context.Context, *registry.Call, args) (countOut, error) { return countOut{State: "ok", N: 1}, nil },
		Render: func(in args, o countOut) []registry.Content {
			return []registry.Content{registry.Text(in.X + ":" + o.State)}
		},
		Meta: func(_ args, o countOut) any { return map[string]int{"n": o.N} },
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestPostExecuteReplacements: content or value, never both, never a value
// on a failed call; a new value is validated and re-rendered.
func TestPostExecuteReplacements(t *testing.T) {
	tests := []struct {
		name   string
		fail   bool // the body fails
		dec    PostDecision
		text   string
		code   string
		value  any
		meta   string
		errMsg string
	}{
		{name: "content replaced: value and meta kept",
			dec:  PostDecision{Kind: Accept, Content: []registry.Content{registry.Text("redacted")}},
			text: "redacted", value: countOut{State: "ok", N: 1}, meta: `{"n":1}`},
		{name: "value replaced: re-rendered, meta from the new value",
			dec:  PostDecision{Kind: Accept, Value: countOut{State: "failed", N: 7}},
			text: "a:failed", value: countOut{State: "failed", N: 7}, meta: `{"n":7}`},
		{name: "value replaced by a map of the right shape",
			dec:  PostDecision{Kind: Accept, Value: map[string]any{"state": "ok", "n": 2}},
			text: "a:ok", value: countOut{State: "ok", N: 2}, meta: `{"n":2}`},
		{name: "value outside the output schema",
			dec:  PostDecision{Kind: Accept, Value: countOut{State: "maybe"}},
			code: registry.CodeInvalidOutput, errMsg: `"state" must be one of ["ok","failed"]`},
		{name: "both replaced",
			dec:  PostDecision{Kind: Accept, Value: countOut{State: "ok"}, Content: []registry.Content{registry.Text("x")}},
			code: registry.CodePostExecuteFailed, errMsg: "replaced both the content and the value"},
		{name: "a value on a failed call", fail: true,
			dec:  PostDecision{Kind: Accept, Value: countOut{State: "ok"}},
			code: registry.CodePostExecuteFailed, errMsg: "replaced the value of a failed call"},
		{name: "content on a failed call is fine", fail: true,
			dec:  PostDecision{Kind: Accept, Content: []registry.Content{registry.Text("Error: nicer")}},
			text: "Error: nicer", code: registry.CodeToolError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := countDef(t)
			if tt.fail {
				d = newDef(t, registry.Tool[args, string]{Name: "count", Run: func(context.Context, *registry.Call, args) (string, error) {
					return "", context.DeadlineExceeded
				}})
			}
			p := New(&Options{PostExecute: []PostHook{func(context.Context, *registry.Def, *registry.Call, registry.Result) PostDecision { return tt.dec }}})
			r := p.Execute(t.Context(), d, call(`{"x":"a"}`))
			if r.Code != tt.code {
				t.Fatalf("code %q (%s), want %q", r.Code, r.Text(), tt.code)
			}
			if tt.errMsg != "" {
				if !strings.Contains(r.Text(), tt.errMsg) {
					t.Fatalf("text %q, want it to say %q", r.Text(), tt.errMsg)
				}
				return
			}
			if r.Text() != tt.text || string(r.Meta) != tt.meta || (tt.value != nil && r.Value != tt.value) {
				t.Fatalf("result %q meta %s value %#v\nwant %q %s %#v", r.Text(), r.Meta, r.Value, tt.text, tt.meta, tt.value)
			}
		})
	}
}

// TestShortCircuitIsNormalized: a middleware's own result is normalized
// like a dispatched one.
func TestShortCircuitIsNormalized(t *testing.T) {
	tests := []struct {
		name string
		r    registry.Result
		text string
		code string
		meta string
	}{
		{name: "a cached value from another call: rendered for this one",
			r:    registry.Result{Content: []registry.Content{registry.Text("other:ok")}, Value: countOut{State: "ok", N: 4}},
			text: "a:ok", meta: `{"n":4}`},
		{name: "a value outside the output schema",
			r:    registry.Result{Value: countOut{State: "stale"}},
			code: registry.CodeInvalidOutput},
		{name: "content only: kept as it is",
			r:    registry.Result{Content: []registry.Content{registry.Text("plain")}},
			text: "plain"},
		{name: "meta that is not JSON",
			r:    registry.Result{Content: []registry.Content{registry.Text("x")}, Meta: json.RawMessage(`{`)},
			code: registry.CodeInvalidToolOutput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran bool
			d := countDef(t)
			p := New(&Options{Middleware: []Middleware{func(*registry.Def, Next) Next {
				return func(context.Context, *registry.Call) registry.Result { return tt.r }
			}}, Observers: []Observer{func(*registry.Def, *registry.Call, registry.Result) { ran = true }}})
			r := p.Execute(t.Context(), d, call(`{"x":"a"}`))
			if r.Code != tt.code || tt.code == "" && (r.Text() != tt.text || string(r.Meta) != tt.meta) {
				t.Fatalf("result %q code %q meta %s, want %q %q %s", r.Text(), r.Code, r.Meta, tt.text, tt.code, tt.meta)
			}
			if !ran {
				t.Fatal("the observer did not see the call")
			}
		})
	}
}

// TestLiveStages: gates, guards, middleware, post-execute hooks and
// observers are added to a live pipeline and removed by the function the
// add returns; each call runs with the stages it started with.
func TestLiveStages(t *testing.T) {
	deny := func(context.Context, *registry.Def, *registry.Call) Decision {
		return Decision{Kind: Deny, Reason: "gate"}
	}
	guard := func(context.Context, *registry.Def, *registry.Call) string { return "guard" }
	mw := func(*registry.Def, Next) Next {
		return func(context.Context, *registry.Call) registry.Result {
			return registry.Result{Content: []registry.Content{registry.Text("mw")}}
		}
	}
	post := func(context.Context, *registry.Def, *registry.Call, registry.Result) PostDecision {
		return PostDecision{Kind: Accept, Content: []registry.Content{registry.Text("post")}}
	}
	tests := []struct {
		name string
		add  func(p *Pipeline) func()
		with string
	}{
		{"gate", func(p *Pipeline) func() { return p.AddGate(deny) }, "Error: gate"},
		{"guard", func(p *Pipeline) func() { return p.AddGuard(guard) }, "Error: guard"},
		{"middleware", func(p *Pipeline) func() { return p.AddMiddleware(mw) }, "mw"},
		{"post-execute", func(p *Pipeline) func() { return p.AddPostExecute(post) }, "post"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(nil)
			d := newDef(t, registry.Tool[args, string]{})
			if r := p.Execute(t.Context(), d, call(`{}`)); r.Text() != "ok" {
				t.Fatalf("before: %q", r.Text())
			}
			remove := tt.add(p)
			if r := p.Execute(t.Context(), d, call(`{}`)); r.Text() != tt.with {
				t.Fatalf("with it: %q, want %q", r.Text(), tt.with)
			}
			remove()
			remove() // idempotent
			if r := p.Execute(t.Context(), d, call(`{}`)); r.Text() != "ok" {
				t.Fatalf("after removing: %q", r.Text())
			}
		})
	}
	t.Run("observer", func(t *testing.T) {
		p := New(nil)
		var n int
		remove := p.AddObserver(func(*registry.Def, *registry.Call, registry.Result) { n++ })
		d := newDef(t, registry.Tool[args, string]{})
		p.Execute(t.Context(), d, call(`{}`))
		remove()
		p.Execute(t.Context(), d, call(`{}`))
		if n != 1 {
			t.Fatalf("observed %d calls, want 1", n)
		}
	})
	t.Run("a guard added mid-call applies to the next call only", func(t *testing.T) {
		p := New(nil)
		inGate, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		p.AddGate(func(context.Context, *registry.Def, *registry.Call) Decision {
			once.Do(func() { close(inGate); <-release })
			return Decision{}
		})
		d := newDef(t, registry.Tool[args, string]{})
		first := make(chan registry.Result)
		go func() { first <- p.Execute(t.Context(), d, call(`{}`)) }()
		<-inGate
		remove := p.AddGuard(guard) // lands while the first call is between its gate and guards
		close(release)
		if r := <-first; r.Text() != "ok" {
			t.Fatalf("the call in flight got the new guard half-way: %q", r.Text())
		}
		if r := p.Execute(t.Context(), d, call(`{}`)); r.Text() != "Error: guard" {
			t.Fatalf("the next call: %q", r.Text())
		}
		remove()
	})
	t.Run("added gates run after the options' gates", func(t *testing.T) {
		var order []string
		p := New(&Options{Gates: []Gate{func(context.Context, *registry.Def, *registry.Call) Decision {
			order = append(order, "opt")
			return Decision{}
		}}})
		p.AddGate(func(context.Context, *registry.Def, *registry.Call) Decision {
			order = append(order, "added")
			return Decision{}
		})
		p.Execute(t.Context(), newDef(t, registry.Tool[args, string]{}), call(`{}`))
		if !slices.Equal(order, []string{"opt", "added"}) {
			t.Fatalf("gate order %v", order)
		}
	})
}
