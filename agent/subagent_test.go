package agent

import (
	"context"
	"encoding/json"
	"iter"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/codemode"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/google/go-cmp/cmp"
)

// taskFanOut is a model for a Code Mode parent that fans out to explorers:
// the parent's first request runs a program that starts one task per
// file with Promise.all, and each explorer's first request waits until
// every explorer's has arrived (so the turn ends only if they overlap).
type taskFanOut struct {
	t       *testing.T
	files   []string
	program string

	mu      sync.Mutex
	arrived int
	all     chan struct{}
	parent  []*model.Request
}

func (f *taskFanOut) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		first := req.Messages[1].Content
		if sub, ok := strings.CutPrefix(first, "SUB "); ok {
			if len(req.Messages) == 2 {
				f.mu.Lock()
				f.arrived++
				if f.arrived == len(f.files) {
					close(f.all)
				}
				f.mu.Unlock()
				select {
				case <-f.all:
				case <-ctx.Done():
					return
				}
				args, _ := json.Marshal(map[string]string{"what": sub})
				yield(model.Event{Kind: model.EventToolCall, ToolCall: &model.ToolCall{ID: "l", Name: "look", Arguments: args}}, nil)
				yield(model.Event{Kind: model.EventUsage, Usage: &model.Usage{InputTokens: 10, OutputTokens: 1}}, nil)
				return
			}
			yield(model.Event{Kind: model.EventText, Text: "saw " + sub}, nil)
			return
		}
		f.mu.Lock()
		f.parent = append(f.parent, req)
		n := len(f.parent)
		f.mu.Unlock()
		if n == 1 {
			args, _ := json.Marshal(map[string]string{"code": f.program, "description": "Fan out"})
			yield(model.Event{Kind: model.EventToolCall, ToolCall: &model.ToolCall{ID: "call_1", Name: "run_code", Arguments: args}}, nil)
			return
		}
		yield(model.Event{Kind: model.EventText, Text: "ok"}, nil)
	}
}

type lookIn struct {
	What string `json:"what"`
}

// TestSubagentCodeModeFanOut: a program starts three explorers with
// Promise.all; they run at the same time (each one's first request waits
// for all), every call of every subagent is a card under its task's, the
// task cards are under run_code's, and the program gets the answers.
func TestSubagentCodeModeFanOut(t *testing.T) {
	reg := registry.New()
	registry.MustAdd(reg, registry.Tool[lookIn, string]{Name: "look", Facts: registry.Facts{ReadOnly: true},
		Run: func(_ context.Context, _ *registry.Call, in lookIn) (string, error) {
			return "looked at " + in.What, nil
		}})
	registry.MustAdd(reg, writeTool())
	f := &taskFanOut{t: t, files: []string{"a", "b", "c"}, all: make(chan struct{}),
		program: `const rs = await Promise.all(["a", "b", "c"].map(f => tools.task({profile: "explorer", prompt: "SUB " + f, description: "Look at " + f})));
return rs.join("|")`}
	e := newEditor(t, Options{Registry: reg, Model: f, ToolsMode: codemode.ModeCode, UserInstructionsDir: "-", UserProfilesDir: "-"})
	sid := e.newSession(t.TempDir())
	if stop, err := e.prompt(sid, "look at everything"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %v, %v", stop, err)
	}
	if len(f.parent) != 2 {
		t.Fatalf("parent requests = %d", len(f.parent))
	}
	var results []string
	for _, m := range f.parent[1].Messages {
		if m.Role == model.RoleTool {
			results = append(results, m.Content)
		}
	}
	if d := cmp.Diff([]string{"saw a|saw b|saw c"}, results); d != "" {
		t.Errorf("the program's result (-want +got):\n%s", d)
	}
	type card struct{ title, status, parent string }
	cards := map[string]*card{}
	for _, u := range e.updates() {
		switch u := u.(type) {
		case *acp.ToolCall:
			c := &card{title: u.Title, status: string(u.Status)}
			if p, ok := u.Meta["acp_bridge"].(map[string]any); ok {
				c.parent, _ = p["parentToolCallId"].(string)
			}
			cards[u.ToolCallID] = c
		case *acp.ToolCallUpdate:
			if c := cards[u.ToolCallID]; c != nil && u.Status != nil {
				c.status = string(*u.Status)
			}
		}
	}
	got := map[string]card{}
	for id, c := range cards {
		got[id] = *c
	}
	want := map[string]card{"call_1": {title: "Fan out", status: "completed"}}
	for i, n := range []string{"a", "b", "c"} {
		task := "call_1:code:" + string(rune('1'+i))
		want[task] = card{title: "explorer: Look at " + n, status: "completed", parent: "call_1"}
		want[task+":task:1"] = card{title: "explorer: look", status: "completed", parent: task}
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(card{})); d != "" {
		t.Errorf("cards (-want +got):\n%s", d)
	}
}

// routeModel answers each request with what the function says.
type routeModel struct {
	mu   sync.Mutex
	reqs []*model.Request
	fn   func(req *model.Request) []model.Event
}

func (r *routeModel) Stream(_ context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return func(yield func(model.Event, error) bool) {
		for _, ev := range r.fn(req) {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func usageEv(in, out int) model.Event {
	return model.Event{Kind: model.EventUsage, Usage: &model.Usage{InputTokens: in, OutputTokens: out}}
}

// TestSubagentUsageAddsUp: a user profile names a cheaper model; the
// subagent runs on it, and its cost (at its price) adds to the session's
// running cost, while the context size the editor is shown stays the
// session's own.
func TestSubagentUsageAddsUp(t *testing.T) {
	profilesDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(profilesDir, "cheap.md"), []byte("---\nname: scout\ndescription: looks cheaply\nreadOnly: true\nmodel: cheap\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	parent := &routeModel{fn: func(req *model.Request) []model.Event {
		if req.Messages[len(req.Messages)-1].Role == model.RoleTool {
			return []model.Event{{Kind: model.EventText, Text: "ok"}, usageEv(1000, 100)}
		}
		args, _ := json.Marshal(map[string]string{"profile": "scout", "prompt": "SUB look"})
		return []model.Event{{Kind: model.EventToolCall, ToolCall: &model.ToolCall{ID: "call_1", Name: "task", Arguments: args}}, usageEv(1000, 100)}
	}}
	cheap := &routeModel{fn: func(*model.Request) []model.Event {
		return []model.Event{{Kind: model.EventText, Text: "found"}, usageEv(500, 50)}
	}}
	e := newEditor(t, Options{Models: []ModelChoice{
		{ID: "main", Provider: parent, Price: &Price{Input: 1, Output: 2}},
		{ID: "cheap", Provider: cheap, Price: &Price{Input: 0.1, Output: 0.2}},
	}, DefaultModel: "main", UserInstructionsDir: "-", UserProfilesDir: profilesDir})
	sid := e.newSession(t.TempDir())
	if stop, err := e.prompt(sid, "go"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %v, %v", stop, err)
	}
	if len(parent.reqs) != 2 || len(cheap.reqs) != 1 {
		t.Fatalf("requests: parent %d, cheap %d", len(parent.reqs), len(cheap.reqs))
	}
	var used []uint64
	var cost float64
	for _, u := range e.updates() {
		if u, ok := u.(*acp.UsageUpdate); ok {
			used = append(used, u.Used)
			if u.Cost != nil {
				cost = u.Cost.Amount
			}
		}
	}
	if d := cmp.Diff([]uint64{1100, 1100, 1100}, used); d != "" {
		t.Errorf("usage_update used (-want +got):\n%s", d)
	}
	want := 2*(1000*1+100*2)/1e6 + (500*0.1+50*0.2)/1e6
	if math.Abs(cost-want) > 1e-12 {
		t.Errorf("cost = %v, want %v", cost, want)
	}
}
