package agent

import (
	"context"
	"encoding/json"
	"iter"
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
