package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
)

type args struct {
	X string `json:"x,omitempty"`
}

// recorder collects the stages a call went through, in order.
type recorder struct {
	mu     sync.Mutex
	stages []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stages = append(r.stages, s)
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.stages)
}

type approverFunc func(ctx context.Context, d *registry.Def, c *registry.Call, reason string) (Outcome, error)

func (f approverFunc) Approve(ctx context.Context, d *registry.Def, c *registry.Call, reason string) (Outcome, error) {
	return f(ctx, d, c, reason)
}

func newDef(t testing.TB, tool registry.Tool[args, string]) *registry.Def {
	t.Helper()
	if tool.Name == "" {
		tool.Name = "t"
	}
	if tool.Run == nil {
		tool.Run = func(context.Context, *registry.Call, args) (string, error) { return "ok", nil }
	}
	d, err := registry.Define(tool)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func call(a string) *registry.Call {
	return &registry.Call{ID: "c1", Name: "t", Args: json.RawMessage(a)}
}

// TestStagesAndDecisions runs one call per case through a pipeline with
// every stage populated and checks the stages it passed and its result.
func TestStagesAndDecisions(t *testing.T) {
	approved := Approved
	rejected := Rejected
	cancelled := Cancelled
	unavailable := Unavailable
	type tc struct {
		name          string
		args          string
		gates         []Decision
		gatePanic     bool
		rewrite       bool
		approve       *Outcome
		approveErr    error
		approvePanic  bool
		noApprover    bool
		guard         string
		guardPanic    bool
		body          func(ctx context.Context) (string, error)
		mwPanic       bool
		post          []PostDecision
		postPanic     bool
		finalizePanic bool
		observerPanic bool

		stages []string
		text   string
		code   string
		ctxs   []string
	}
	full := []string{"gate", "guard", "mw1", "mw2", "body", "post", "finalize", "observe"}
	commit := []string{"post", "finalize", "observe"}
	tests := []tc{
		{name: "allow", stages: full, text: "ok!"},
		{name: "deny", gates: []Decision{{Kind: Deny, Reason: "bash is disabled by policy in this session"}},
			stages: append([]string{"gate"}, commit...), text: "Error: bash is disabled by policy in this session!", code: "DENIED"},
		{name: "deny without reason", gates: []Decision{{Kind: Deny}},
			stages: append([]string{"gate"}, commit...), text: `Error: tool "t" was denied by policy!`, code: "DENIED"},
		{name: "deny after ask wins without asking", gates: []Decision{{Kind: Ask, Reason: "r"}, {Kind: Deny, Reason: "no"}}, approve: &approved,
			stages: append([]string{"gate", "gate"}, commit...), text: "Error: no!", code: "DENIED"},
		{name: "unknown decision", gates: []Decision{{Kind: 7}},
			stages: append([]string{"gate"}, commit...), text: `Error: policy check for tool "t" returned an unknown decision 7!`, code: "GATE_FAILED"},
		// A crashed policy stage is not judged by post-execute (the seed
		// settles such a call directly); finalize and observers still run.
		{name: "gate panic", gatePanic: true,
			stages: []string{"finalize", "observe"}, text: `Error: policy check for tool "t" failed: gate bug!`, code: "GATE_FAILED"},
		{name: "ask approved", gates: []Decision{{Kind: Ask, Reason: "why"}}, approve: &approved,
			stages: []string{"gate", "approve:why", "guard", "mw1", "mw2", "body", "post", "finalize", "observe"}, text: "ok!"},
		{name: "ask rejected", gates: []Decision{{Kind: Ask}}, approve: &rejected,
			stages: append([]string{"gate", "approve:"}, commit...), text: `Error: the user rejected tool "t"!`, code: "REJECTED"},
		{name: "ask cancelled", gates: []Decision{{Kind: Ask}}, approve: &cancelled,
			stages: append([]string{"gate", "approve:"}, commit...), text: `Error: approval for tool "t" was cancelled!`, code: "APPROVAL_CANCELLED"},
		{name: "ask unavailable", gates: []Decision{{Kind: Ask}}, approve: &unavailable,
			stages: append([]string{"gate", "approve:"}, commit...), text: `Error: tool "t" requires approval, but no approval channel is available!`, code: "APPROVAL_UNAVAILABLE"},
		{name: "approver error", gates: []Decision{{Kind: Ask}}, approve: &approved, approveErr: errors.New("client gone"),
			stages: append([]string{"gate", "approve:"}, commit...), text: `Error: tool "t" requires approval, but no approval channel is available!`, code: "APPROVAL_UNAVAILABLE"},
		{name: "approver panic", gates: []Decision{{Kind: Ask}}, approvePanic: true,
			stages: append([]string{"gate"}, commit...), text: `Error: tool "t" requires approval, but no approval channel is available!`, code: "APPROVAL_UNAVAILABLE"},
		{name: "no approver", gates: []Decision{{Kind: Ask}}, noApprover: true,
			stages: append([]string{"gate"}, commit...), text: `Error: tool "t" requires approval, but no approval channel is available!`, code: "APPROVAL_UNAVAILABLE"},
		{name: "unknown outcome", gates: []Decision{{Kind: Ask}}, approve: func() *Outcome { o := Outcome(9); return &o }(),
			stages: append([]string{"gate", "approve:"}, commit...), text: `Error: tool "t" requires approval, but no approval channel is available!`, code: "APPROVAL_UNAVAILABLE"},
		{name: "guard denies", guard: "outside the workspace",
			stages: append([]string{"gate", "guard"}, commit...), text: "Error: outside the workspace!", code: "DENIED"},
		{name: "guard denies after approval", gates: []Decision{{Kind: Ask}}, approve: &approved, guard: "still no",
			stages: append([]string{"gate", "approve:", "guard"}, commit...), text: "Error: still no!", code: "DENIED"},
		{name: "guard panic", guardPanic: true,
			stages: []string{"gate", "finalize", "observe"}, text: `Error: guard for tool "t" failed: guard bug!`, code: "GUARD_FAILED"},
		{name: "invalid args skip policy", args: `{"x":1}`,
			stages: commit, text: `Error: invalid arguments: "x" must be a string!`, code: "INVALID_ARGS"},
		{name: "args not JSON", args: `{"x"`,
			stages: commit, text: "Error: invalid arguments: not valid JSON", code: "INVALID_ARGS"},
		{name: "gate rewrites args", rewrite: true,
			stages: []string{"gate", "guard", "mw1", "mw2", "post", "finalize", "observe"},
			text:   `Error: the arguments of tool "t" were rewritten after they were logged; policy may not change them!`, code: "ARGS_REWRITTEN"},
		{name: "body error", body: func(context.Context) (string, error) { return "", errors.New("disk full") },
			stages: full, text: "Error: disk full!", code: "TOOL_ERROR"},
		{name: "body coded error", body: func(context.Context) (string, error) { return "", registry.Errorf("NOT_FOUND", "no such file") },
			stages: full, text: "Error: no such file!", code: "NOT_FOUND"},
		{name: "body panic", body: func(context.Context) (string, error) { panic("nil map") },
			stages: full, text: `Error: tool "t" crashed: nil map!`, code: "TOOL_PANIC"},
		{name: "middleware panic", mwPanic: true,
			stages: []string{"gate", "guard", "mw1", "post", "finalize", "observe"}, text: `Error: middleware of tool "t" crashed: mw bug!`, code: "MIDDLEWARE_PANIC"},
		{name: "post accept replaces content", post: []PostDecision{{Kind: Accept, Content: []registry.Content{registry.Text("redacted")}}},
			stages: full, text: "redacted!"},
		{name: "post accept keeps content, adds context", post: []PostDecision{{Kind: Accept, Context: []string{"c1"}}, {Kind: Accept, Context: []string{"c2"}}},
			stages: []string{"gate", "guard", "mw1", "mw2", "body", "post", "post", "finalize", "observe"}, text: "ok!", ctxs: []string{"c1", "c2"}},
		{name: "post block", post: []PostDecision{{Kind: Accept, Context: []string{"kept"}}, {Kind: Block, Feedback: []registry.Content{registry.Text("tool output rejected by policy: retry once")}, Context: []string{"why"}}, {Kind: Accept}},
			stages: []string{"gate", "guard", "mw1", "mw2", "body", "post", "post", "finalize", "observe"},
			text:   "tool output rejected by policy: retry once!", code: "BLOCKED", ctxs: []string{"kept", "why"}},
		{name: "post block without feedback", post: []PostDecision{{Kind: Block}},
			stages: full, text: `Error: the output of tool "t" was blocked by policy!`, code: "BLOCKED"},
		{name: "post sees denials", gates: []Decision{{Kind: Deny, Reason: "no"}}, post: []PostDecision{{Kind: Accept, Content: []registry.Content{registry.Text("Error: no (policy)")}}},
			stages: append([]string{"gate"}, commit...), text: "Error: no (policy)!", code: "DENIED"},
		{name: "post unknown decision", post: []PostDecision{{Kind: 5}},
			stages: full, text: `Error: post-execute check of tool "t" returned an unknown decision 5!`, code: "POST_EXECUTE_FAILED"},
		{name: "post panic", postPanic: true,
			stages: []string{"gate", "guard", "mw1", "mw2", "body", "finalize", "observe"}, text: `Error: post-execute check of tool "t" failed: post bug!`, code: "POST_EXECUTE_FAILED"},
		{name: "finalize panic", finalizePanic: true,
			stages: []string{"gate", "guard", "mw1", "mw2", "body", "post", "observe"}, text: `Error: finalizing tool "t" crashed: finalize bug`, code: "TOOL_PANIC"},
		{name: "observer panic is contained", observerPanic: true,
			stages: []string{"gate", "guard", "mw1", "mw2", "body", "post", "finalize", "observe"}, text: "ok!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			d := newDef(t, registry.Tool[args, string]{
				Run: func(ctx context.Context, _ *registry.Call, _ args) (string, error) {
					rec.add("body")
					if tt.body != nil {
						return tt.body(ctx)
					}
					return "ok", nil
				},
				Finalize: func(_ *registry.Call, r registry.Result) []registry.Content {
					if tt.finalizePanic {
						panic("finalize bug")
					}
					rec.add("finalize")
					return append(slices.Clone(r.Content), registry.Text("!"))
				},
			})
			gates := tt.gates
			if gates == nil {
				gates = []Decision{{Kind: Allow}}
			}
			o := &Options{}
			for _, g := range gates {
				o.Gates = append(o.Gates, func(_ context.Context, _ *registry.Def, c *registry.Call) Decision {
					if tt.gatePanic {
						panic("gate bug")
					}
					rec.add("gate")
					if tt.rewrite {
						c.Args = json.RawMessage(`{"x":"rm -rf /"}`)
					}
					return g
				})
			}
			if !tt.noApprover {
				o.Approver = approverFunc(func(_ context.Context, _ *registry.Def, _ *registry.Call, reason string) (Outcome, error) {
					if tt.approvePanic {
						panic("approver bug")
					}
					rec.add("approve:" + reason)
					if tt.approve == nil {
						t.Fatal("approver called unexpectedly")
					}
					return *tt.approve, tt.approveErr
				})
			}
			o.Guards = []Guard{func(context.Context, *registry.Def, *registry.Call) string {
				if tt.guardPanic {
					panic("guard bug")
				}
				rec.add("guard")
				return tt.guard
			}}
			o.Middleware = []Middleware{
				func(d *registry.Def, next Next) Next {
					return func(ctx context.Context, c *registry.Call) registry.Result {
						rec.add("mw1")
						return next(ctx, c)
					}
				},
				func(d *registry.Def, next Next) Next {
					return func(ctx context.Context, c *registry.Call) registry.Result {
						if tt.mwPanic {
							panic("mw bug")
						}
						rec.add("mw2")
						return next(ctx, c)
					}
				},
			}
			for _, pd := range tt.post {
				o.PostExecute = append(o.PostExecute, func(context.Context, *registry.Def, *registry.Call, registry.Result) PostDecision {
					rec.add("post")
					return pd
				})
			}
			if tt.post == nil {
				o.PostExecute = []PostHook{func(context.Context, *registry.Def, *registry.Call, registry.Result) PostDecision {
					if tt.postPanic {
						panic("post bug")
					}
					rec.add("post")
					return PostDecision{}
				}}
			}
			var observed registry.Result
			o.Observers = []Observer{
				func(*registry.Def, *registry.Call, registry.Result) {
					if tt.observerPanic {
						panic("observer bug")
					}
				},
				func(_ *registry.Def, _ *registry.Call, r registry.Result) { rec.add("observe"); observed = r },
			}
			a := tt.args
			if a == "" {
				a = `{"x":"a"}`
			}
			r := New(o).Execute(t.Context(), d, call(a))
			if got := rec.get(); !slices.Equal(got, tt.stages) {
				t.Errorf("stages\n got %v\nwant %v", got, tt.stages)
			}
			if !strings.HasPrefix(r.Text(), tt.text) || r.Code != tt.code || r.IsError != (tt.code != "") {
				t.Errorf("result = %q code %q isError %v\nwant %q code %q", r.Text(), r.Code, r.IsError, tt.text, tt.code)
			}
			if !slices.Equal(r.Context, tt.ctxs) {
				t.Errorf("context = %q, want %q", r.Context, tt.ctxs)
			}
			if observed.Text() != r.Text() || observed.Code != r.Code {
				t.Errorf("the observer saw %q, the caller got %q", observed.Text(), r.Text())
			}
		})
	}
}

func TestExecuteUnknownTool(t *testing.T) {
	r := New(nil).Execute(t.Context(), nil, &registry.Call{Name: "nope"})
	if r.Code != "UNKNOWN_TOOL" || r.Text() != `Error: unknown tool "nope"` {
		t.Fatalf("%+v", r)
	}
}

func TestNewRefusesNegativeParallelism(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New accepted MaxParallel < 0")
		}
	}()
	New(&Options{MaxParallel: -1})
}

func TestCancellation(t *testing.T) {
	tests := []struct {
		name string
		// setup returns the options and the body; cancel cancels the call's context.
		setup     func(cancel context.CancelFunc) (*Options, func(ctx context.Context) (string, error))
		preCancel bool
		text      string
		code      string
		bodyRan   bool
	}{
		{name: "cancelled before the call", preCancel: true,
			setup: func(context.CancelFunc) (*Options, func(context.Context) (string, error)) { return nil, nil },
			text:  "Error: tool call aborted before dispatch", code: "ABORTED_BEFORE_DISPATCH"},
		{name: "cancelled by a gate",
			setup: func(cancel context.CancelFunc) (*Options, func(context.Context) (string, error)) {
				return &Options{Gates: []Gate{func(context.Context, *registry.Def, *registry.Call) Decision { cancel(); return Decision{} }}}, nil
			},
			text: "Error: tool call aborted before dispatch", code: "ABORTED_BEFORE_DISPATCH"},
		{name: "cancelled while asking",
			setup: func(cancel context.CancelFunc) (*Options, func(context.Context) (string, error)) {
				return &Options{
					Gates: []Gate{func(context.Context, *registry.Def, *registry.Call) Decision { return Decision{Kind: Ask} }},
					Approver: approverFunc(func(ctx context.Context, _ *registry.Def, _ *registry.Call, _ string) (Outcome, error) {
						cancel()
						return Approved, ctx.Err()
					}),
				}, nil
			},
			text: `Error: approval for tool "t" was cancelled`, code: "APPROVAL_CANCELLED"},
		{name: "cancelled during the body, which succeeds", bodyRan: true,
			setup: func(cancel context.CancelFunc) (*Options, func(context.Context) (string, error)) {
				return nil, func(ctx context.Context) (string, error) { cancel(); <-ctx.Done(); return "done anyway", nil }
			},
			text: "Error: tool call aborted", code: "ABORTED"},
		{name: "cancelled during the body, which returns the context error", bodyRan: true,
			setup: func(cancel context.CancelFunc) (*Options, func(context.Context) (string, error)) {
				return nil, func(ctx context.Context) (string, error) { cancel(); <-ctx.Done(); return "", ctx.Err() }
			},
			text: "Error: tool call aborted", code: "ABORTED"},
		{name: "a more specific failure wins", bodyRan: true,
			setup: func(cancel context.CancelFunc) (*Options, func(context.Context) (string, error)) {
				return nil, func(ctx context.Context) (string, error) {
					cancel()
					return "", registry.Errorf("PARTIAL_WRITE", "wrote 3 of 5 files")
				}
			},
			text: "Error: wrote 3 of 5 files", code: "PARTIAL_WRITE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			o, body := tt.setup(cancel)
			var ran, drained bool
			d := newDef(t, registry.Tool[args, string]{Run: func(ctx context.Context, _ *registry.Call, _ args) (string, error) {
				ran = true
				defer func() { drained = true }()
				if body != nil {
					return body(ctx)
				}
				return "ok", nil
			}})
			if tt.preCancel {
				cancel()
			}
			r := New(o).Execute(ctx, d, call(`{}`))
			if r.Text() != tt.text || r.Code != tt.code || !r.IsError {
				t.Fatalf("result = %q %q, want %q %q", r.Text(), r.Code, tt.text, tt.code)
			}
			if ran != tt.bodyRan || ran && !drained {
				t.Fatalf("body ran=%v drained=%v, want ran=%v and drained", ran, drained, tt.bodyRan)
			}
		})
	}
}
