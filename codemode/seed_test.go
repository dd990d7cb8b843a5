package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
)

// The tests in this file state the seed harness's Code Mode behaviour:
// policy in submission order while bodies overlap, and how a sub-call ends
// when policy crashes or the run settles under it.

// events is a goroutine-safe ordered log.
type events struct {
	mu sync.Mutex
	ev []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	e.ev = append(e.ev, s)
	e.mu.Unlock()
}

func (e *events) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.ev)
}

func (e *events) only(prefix string) []string {
	var out []string
	for _, s := range e.get() {
		if strings.HasPrefix(s, prefix) {
			out = append(out, strings.TrimPrefix(s, prefix))
		}
	}
	return out
}

func subID(c *registry.Call) string { return strings.TrimPrefix(c.ID, "p:code:") }

type latchArgs struct {
	V int `json:"v"`
}

// addLatch adds the safe tool latch, whose bodies wait until n of them
// run, then end in ascending order of v (onEnd sees each end, in order):
// they overlap and finish in a known order whatever the scheduling.
func addLatch(reg *registry.Registry, n int, onEnd func(v int)) {
	var latch sync.WaitGroup
	latch.Add(n)
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	var waiting []int // the v of every body that has not ended
	registry.MustAdd(reg, registry.Tool[latchArgs, int]{Name: "latch",
		ConcurrencySafe: func(latchArgs) bool { return true },
		Run: func(ctx context.Context, _ *registry.Call, in latchArgs) (int, error) {
			mu.Lock()
			waiting = append(waiting, in.V)
			mu.Unlock()
			latch.Done()
			overlapped := make(chan struct{})
			go func() { latch.Wait(); close(overlapped) }()
			select {
			case <-overlapped:
			case <-time.After(10 * time.Second):
				return 0, errors.New("the bodies did not overlap")
			}
			mu.Lock()
			defer mu.Unlock()
			for slices.Min(waiting) != in.V {
				cond.Wait()
			}
			if onEnd != nil {
				onEnd(in.V)
			}
			waiting = slices.DeleteFunc(waiting, func(v int) bool { return v == in.V })
			cond.Broadcast()
			return in.V, nil
		}})
}

// TestPolicyInSubmissionOrder: the gates of Promise.all sub-calls run one at
// a time in call order (a slow gate on the first delays the second), and
// post-execute and additional context commit in submission order while the
// bodies overlap and finish out of order.
func TestPolicyInSubmissionOrder(t *testing.T) {
	tests := []struct {
		name string
		code string
		// gateDelay slows the gate of the sub-call with this id.
		gateDelay map[string]time.Duration
		gates     []string // gate entries and exits, in order
		bodies    []string // bodies ending, in order (exclusive calls)
		ends      []int    // latch bodies ending, by v
		posts     []string // post-execute, in order
		peak      int      // most bodies at once
	}{
		{name: "a slow first gate delays the second; bodies still overlap",
			code:      `return await Promise.all([tools.latch({v: 60}), tools.latch({v: 10}), tools.latch({v: 30})])`,
			gateDelay: map[string]time.Duration{"1": 40 * time.Millisecond},
			gates:     []string{"in 1", "out 1", "in 2", "out 2", "in 3", "out 3"},
			ends:      []int{10, 30, 60},
			posts:     []string{"1", "2", "3"}, peak: 3},
		{name: "bodies finishing in reverse still commit in order",
			code:  `return await Promise.all([tools.latch({v: 90}), tools.latch({v: 50}), tools.latch({v: 10})])`,
			gates: []string{"in 1", "out 1", "in 2", "out 2", "in 3", "out 3"},
			ends:  []int{10, 50, 90},
			posts: []string{"1", "2", "3"}, peak: 3},
		{name: "an exclusive call in between is a barrier",
			code:   `return await Promise.all([tools.sleep({v: 30}), tools.sleep({v: 1005}), tools.sleep({v: 10})])`,
			gates:  []string{"in 1", "out 1", "in 2", "out 2", "in 3", "out 3"},
			bodies: []string{"1", "2", "3"},
			posts:  []string{"1", "2", "3"}, peak: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &events{}
			var mu sync.Mutex
			running, peak := 0, 0
			reg := testRegistry(t)
			var ends []int
			addLatch(reg, 3, func(v int) { ends = append(ends, v) }) // called under the latch's lock
			h := newRecorder(reg)
			h.Pipe = pipeline.New(&pipeline.Options{
				Gates: []pipeline.Gate{func(_ context.Context, _ *registry.Def, c *registry.Call) pipeline.Decision {
					ev.add("gate in " + subID(c))
					time.Sleep(tt.gateDelay[subID(c)])
					ev.add("gate out " + subID(c))
					return pipeline.Decision{}
				}},
				Middleware: []pipeline.Middleware{func(_ *registry.Def, next pipeline.Next) pipeline.Next {
					return func(ctx context.Context, c *registry.Call) registry.Result {
						mu.Lock()
						running++
						peak = max(peak, running)
						mu.Unlock()
						r := next(ctx, c)
						ev.add("body " + subID(c))
						mu.Lock()
						running--
						mu.Unlock()
						return r
					}
				}},
				PostExecute: []pipeline.PostHook{func(_ context.Context, _ *registry.Def, c *registry.Call, _ registry.Result) pipeline.PostDecision {
					ev.add("post " + subID(c))
					return pipeline.PostDecision{Kind: pipeline.Accept, Context: []string{"ctx " + subID(c)}}
				}},
			})
			var ctxs []string
			h.OnResult = func(c *registry.Call, r registry.Result) {
				ev.add("result " + subID(c))
				ctxs = append(ctxs, r.Context...)
			}
			out, err := NewRunner(&Options{Values: jsonValues{}}).Run(t.Context(), &registry.Call{ID: "p"}, tt.code, h)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Result) == 0 {
				t.Fatal("no result")
			}
			if got := ev.only("gate "); !slices.Equal(got, tt.gates) {
				t.Errorf("gates %v, want %v", got, tt.gates)
			}
			if got := ev.only("body "); tt.bodies != nil && !slices.Equal(got, tt.bodies) {
				t.Errorf("bodies ended %v, want %v", got, tt.bodies)
			}
			if !slices.Equal(ends, tt.ends) {
				t.Errorf("latch bodies ended %v, want %v", ends, tt.ends)
			}
			if got := ev.only("post "); !slices.Equal(got, tt.posts) {
				t.Errorf("post-execute %v, want %v", got, tt.posts)
			}
			if got := ev.only("result "); !slices.Equal(got, tt.posts) {
				t.Errorf("results %v, want %v", got, tt.posts)
			}
			if want := []string{"ctx 1", "ctx 2", "ctx 3"}; !slices.Equal(ctxs, want) {
				t.Errorf("additional context %v, want %v", ctxs, want)
			}
			if peak != tt.peak {
				t.Errorf("peak bodies %d, want %d", peak, tt.peak)
			}
		})
	}
}

// TestSubCallEndings: a gate that panics settles the sub-call without
// post-execute; a run that settles while a sub-call is in post-execute ends
// that sub-call aborted, with its result event inside the run.
func TestSubCallEndings(t *testing.T) {
	tests := []struct {
		name   string
		limits Limits
		code   string
		gate   func(c *registry.Call)
		post   func(ctx context.Context, c *registry.Call)
		cancel bool // cancel the run from post-execute

		posts   []string
		results []string // "id code"
		result  string   // the program's value
		kind    FailureKind
	}{
		{name: "a gate panics: settled without post-execute",
			code:    `try { await tools.echo({v: 1}) } catch (e) { return e.name + ": " + e.message }`,
			gate:    func(*registry.Call) { panic("gate bug") },
			results: []string{"1 " + registry.CodeGateFailed},
			result:  `"ToolCallError: policy check for tool \"echo\" failed: gate bug"`},
		{name: "the wall clock ends the run during post-execute",
			limits: Limits{Wall: 80 * time.Millisecond},
			code:   `await tools.echo({v: 1})`,
			post:   func(ctx context.Context, _ *registry.Call) { <-ctx.Done() },
			posts:  []string{"1"}, results: []string{"1 " + registry.CodeAborted}, kind: FailTimeout},
		{name: "the user cancels during post-execute",
			code:   `await Promise.all([tools.latch({v: 1}), tools.latch({v: 2})])`,
			cancel: true,
			post:   func(ctx context.Context, _ *registry.Call) { <-ctx.Done() },
			posts:  []string{"1", "2"}, results: []string{"1 " + registry.CodeAborted, "2 " + registry.CodeAborted}, kind: FailAbort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &events{}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			reg := testRegistry(t)
			addLatch(reg, 2, nil)
			h := newRecorder(reg)
			o := &pipeline.Options{}
			if tt.gate != nil {
				o.Gates = []pipeline.Gate{func(_ context.Context, _ *registry.Def, c *registry.Call) pipeline.Decision {
					tt.gate(c)
					return pipeline.Decision{}
				}}
			}
			o.PostExecute = []pipeline.PostHook{func(pctx context.Context, _ *registry.Def, c *registry.Call, _ registry.Result) pipeline.PostDecision {
				ev.add("post " + subID(c))
				if tt.cancel {
					cancel()
				}
				if tt.post != nil {
					tt.post(pctx, c)
				}
				return pipeline.PostDecision{}
			}}
			h.Pipe = pipeline.New(o)
			h.OnResult = func(c *registry.Call, r registry.Result) { ev.add("result " + subID(c) + " " + r.Code) }
			out, err := NewRunner(&Options{Limits: tt.limits, Values: jsonValues{}}).Run(ctx, &registry.Call{ID: "p"}, tt.code, h)
			// Every event landed before Run returned.
			if got := ev.only("post "); !slices.Equal(got, tt.posts) {
				t.Errorf("post-execute %v, want %v", got, tt.posts)
			}
			if got := ev.only("result "); !slices.Equal(got, tt.results) {
				t.Errorf("results %v, want %v", got, tt.results)
			}
			if tt.kind != "" {
				var re *RunError
				if !errors.As(err, &re) || re.Kind != tt.kind {
					t.Fatalf("err = %v, want a %s failure", err, tt.kind)
				}
				return
			}
			if err != nil || string(out.Result) != tt.result {
				t.Fatalf("out %s, err %v; want %s", out.Result, err, tt.result)
			}
		})
	}
}

// TestCodeToolRefusals: what the code tool refuses, and how.
func TestCodeToolRefusals(t *testing.T) {
	h := newRecorder(testRegistry(t))
	if _, err := NewRunner(&Options{Limits: Limits{MaxParallel: -1}}).Tool(h); err == nil || !strings.Contains(err.Error(), "MaxParallel must be positive") {
		t.Errorf("a negative parallel cap: %v", err)
	}
	d, err := NewRunner(nil).Tool(h)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	if err := registry.AddCodeTool(reg, registry.Tool[Args, string]{Run: func(context.Context, *registry.Call, Args) (string, error) { return "ran", nil }}); err != nil {
		t.Fatal(err)
	}
	registry.MustAdd(reg, registry.Tool[echoArgs, string]{Name: "echo", Run: func(context.Context, *registry.Call, echoArgs) (string, error) { return "echoed", nil }})
	if err := reg.SetMode(registry.Code); err != nil {
		t.Fatal(err)
	}
	scope := reg.NewScope()
	if err := scope.SetCodeTool(d); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		tool string // "": run_code
		args string
		code string
		text string
	}{
		{"a blank description", t.Context(), "", `{"code":"return 1","description":"  \t "}`, registry.CodeInvalidArgs,
			`Error: invalid arguments: "description" must say what the program does, not be blank`},
		{"pre-aborted run_code in code mode", cancelled, "", `{"code":"return 1","description":"One"}`, registry.CodeAbortedBeforeDispatch,
			"Error: tool call aborted before dispatch"},
		// Cancellation is checked before the code-mode rejection.
		{"pre-aborted direct call to another tool in code mode", cancelled, "echo", `{"v":1}`, registry.CodeAbortedBeforeDispatch,
			"Error: tool call aborted before dispatch"},
		{"pre-aborted call to an unknown tool", cancelled, "nope", `{}`, registry.CodeAbortedBeforeDispatch,
			"Error: tool call aborted before dispatch"},
		{"a direct call to another tool in code mode", t.Context(), "echo", `{"v":1}`, registry.CodeUnknownTool,
			"Error: " + registry.CodeOnlyMessage("echo")},
		{"a good call", t.Context(), "", `{"code":"return 1","description":"One"}`, "", "1"},
	}
	p := pipeline.New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := tt.tool
			if name == "" {
				name = ToolName
			}
			res := p.ExecuteBatch(tt.ctx, scope, []*registry.Call{{ID: "c", Name: name, Args: json.RawMessage(tt.args)}}, pipeline.Hooks{})
			if res[0].Code != tt.code || res[0].Text() != tt.text {
				t.Fatalf("result %q %q, want %q %q", res[0].Code, res[0].Text(), tt.code, tt.text)
			}
		})
	}
	if len(h.log()) != 0 {
		t.Errorf("a refused call reached the host: %v", h.log())
	}
}
