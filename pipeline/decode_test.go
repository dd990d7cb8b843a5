package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
)

// countedArgs counts its typed decodes: every stage that decoded the
// arguments for itself would add one.
type countedArgs struct {
	Path string `json:"path"`
}

var decodes atomic.Int64

func (a *countedArgs) UnmarshalJSON(b []byte) error {
	decodes.Add(1)
	type plain countedArgs
	return json.Unmarshal(b, (*plain)(a))
}

// countedTool reads its input in every place a tool can: the concurrency
// check, permission, the body, rendering, display meta and both presenters.
func countedTool(t *testing.T) *registry.Def {
	t.Helper()
	d, err := registry.Define(registry.Tool[countedArgs, string]{
		Name: "probe",
		Run: func(_ context.Context, _ *registry.Call, in countedArgs) (string, error) {
			return "probed " + in.Path, nil
		},
		Render:          func(in countedArgs, out string) []registry.Content { return []registry.Content{registry.Text(out)} },
		Meta:            func(in countedArgs, _ string) any { return map[string]string{"path": in.Path} },
		ConcurrencySafe: func(in countedArgs) bool { return in.Path != "exclusive" },
		Permission: func(_ *registry.Call, in countedArgs) *registry.Permission {
			return &registry.Permission{Reason: "probes " + in.Path, Key: "probe:" + in.Path}
		},
		PresentCall: func(in countedArgs) registry.View { return registry.GenericCard{Title: "probe " + in.Path} },
		PresentResult: func(in countedArgs, r registry.Result) registry.View {
			return registry.GenericCard{Title: "probed " + in.Path}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

type oneTool struct{ d *registry.Def }

func (o oneTool) Resolve(string) (*registry.Def, error) { return o.d, nil }

// askingApprover approves after reading the call's permission, as the
// agent's does for the key and the option names.
type askingApprover struct{ asked atomic.Int64 }

func (a *askingApprover) Approve(_ context.Context, d *registry.Def, c *registry.Call, _ string) (Outcome, error) {
	if d.Permission(c) == nil {
		return Rejected, fmt.Errorf("no permission for %s", c.ID)
	}
	a.asked.Add(1)
	return Approved, nil
}

// TestArgumentsDecodedOncePerCall: a call's arguments are decoded into the
// tool's input type once, however many stages read them: the concurrency
// check, the permission gate and the approver, the body, a post-execute
// replacement of the value, and the presenters through the hooks. A
// replay, which has only the stored arguments, decodes them once per card.
func TestArgumentsDecodedOncePerCall(t *testing.T) {
	d := countedTool(t)
	views := func(c *registry.Call, r registry.Result) (string, string) {
		in := c.Decoded()
		call, _ := in.PresentCall().(registry.GenericCard)
		res, _ := in.PresentResult(r).(registry.GenericCard)
		return call.Title, res.Title
	}
	newPipe := func(ap *askingApprover) *Pipeline {
		return New(&Options{
			Gates: []Gate{func(_ context.Context, d *registry.Def, c *registry.Call) Decision {
				if p := d.Permission(c); p != nil {
					return Decision{Kind: Ask, Reason: p.Reason}
				}
				return Decision{Kind: Allow}
			}},
			Approver: ap,
			PostExecute: []PostHook{func(_ context.Context, _ *registry.Def, _ *registry.Call, r registry.Result) PostDecision {
				if r.IsError {
					return PostDecision{}
				}
				return PostDecision{Kind: Accept, Value: r.Value.(string) + " (checked)"} // normalized for the call
			}},
		})
	}
	tests := []struct {
		name  string
		paths []string
	}{
		{"one call", []string{"a"}},
		{"a parallel group", []string{"a", "b", "c"}},
		{"a group, a barrier, a group", []string{"a", "b", "exclusive", "c", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ap := &askingApprover{}
			calls := make([]*registry.Call, len(tt.paths))
			for i, p := range tt.paths {
				calls[i] = &registry.Call{ID: fmt.Sprint(i), Name: "probe", Args: json.RawMessage(`{"path":"` + p + `"}`)}
			}
			var logged []string
			h := Hooks{
				Logged: func(_ int, c *registry.Call) {
					call, _ := c.Decoded().PresentCall().(registry.GenericCard)
					logged = append(logged, call.Title)
				},
			}
			decodes.Store(0)
			res := newPipe(ap).ExecuteBatch(t.Context(), oneTool{d}, calls, h)
			for i, r := range res {
				if r.IsError || r.Text() != "probed "+tt.paths[i]+" (checked)" {
					t.Fatalf("call %d: %q", i, r.Text())
				}
				if call, result := views(calls[i], r); call != "probe "+tt.paths[i] || result != "probed "+tt.paths[i] {
					t.Errorf("call %d: views %q, %q", i, call, result)
				}
				if logged[i] != "probe "+tt.paths[i] {
					t.Errorf("call %d: logged card %q", i, logged[i])
				}
			}
			if got := decodes.Load(); got != int64(len(calls)) {
				t.Errorf("%d typed decodes for %d calls, want one per call", got, len(calls))
			}
			if ap.asked.Load() != int64(len(calls)) {
				t.Errorf("approver asked %d times, want %d", ap.asked.Load(), len(calls))
			}

			// A replay: the stored arguments alone, one decode per card
			// for both of its presenters.
			decodes.Store(0)
			for i, c := range calls {
				in := d.Decode(json.RawMessage(string(c.Args))) // a copy, as read from the log
				call, _ := in.PresentCall().(registry.GenericCard)
				result, _ := in.PresentResult(res[i]).(registry.GenericCard)
				if call.Title != "probe "+tt.paths[i] || result.Title != "probed "+tt.paths[i] {
					t.Errorf("replayed call %d: views %q, %q", i, call.Title, result.Title)
				}
			}
			if got := decodes.Load(); got != int64(len(calls)) {
				t.Errorf("replay: %d typed decodes for %d calls, want one per call", got, len(calls))
			}
		})
	}
}

// TestReplacedArgumentsAreDecodedAgain: the decode kept on a call stands
// for the very arguments it decoded; a call whose Args were replaced, or
// another tool's, gets its own.
func TestReplacedArgumentsAreDecodedAgain(t *testing.T) {
	d := countedTool(t)
	c := &registry.Call{ID: "1", Name: "probe", Args: json.RawMessage(`{"path":"a"}`)}
	decodes.Store(0)
	if !d.ConcurrencySafe(c) || d.Permission(c).Key != "probe:a" {
		t.Fatal("first classification")
	}
	c.Args = json.RawMessage(`{"path":"exclusive"}`)
	if d.ConcurrencySafe(c) || d.Permission(c).Key != "probe:exclusive" {
		t.Error("a call with replaced arguments kept the old decode")
	}
	mine := c.Decoded()
	other := countedTool(t)
	if other.ConcurrencySafe(c) || c.Decoded() == mine {
		t.Error("two tools share one decode")
	}
	if got := decodes.Load(); got != 3 {
		t.Errorf("%d decodes, want 3 (a, exclusive, the other tool's)", got)
	}
}
