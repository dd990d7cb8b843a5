package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
)

// boomArgs tells boomTool where to panic.
type boomArgs struct {
	Where string `json:"where"`
}

// boomTool is a test-only tool that panics at the stage its arguments name:
// no built-in tool can be made to panic, and every stage a tool author
// writes (body, render, meta, presenters, classification, finalize,
// permission) must be survivable inside a real turn.
func boomTool() registry.Tool[boomArgs, string] {
	at := func(in boomArgs, stage string) {
		if in.Where == stage {
			panic("boom in " + stage)
		}
	}
	return registry.Tool[boomArgs, string]{
		Name:        "boom",
		Description: "Panics where told. Test only.",
		Run: func(_ context.Context, _ *registry.Call, in boomArgs) (string, error) {
			at(in, "run")
			switch in.Where {
			case "nil map":
				var m map[string]int
				//lint:ignore SA5000 the panic is the point of this case
				m["x"]++
			case "nil panic":
				panic(nil)
			case "error value":
				panic(fmt.Errorf("wrapped: %w", context.DeadlineExceeded))
			}
			return "boom ran fine", nil
		},
		Render: func(in boomArgs, out string) []registry.Content {
			at(in, "render")
			return []registry.Content{registry.Text(out)}
		},
		Meta: func(in boomArgs, _ string) any {
			at(in, "meta")
			return map[string]string{"where": in.Where}
		},
		PresentCall: func(in boomArgs) registry.View {
			at(in, "present call")
			return registry.GenericCard{Title: "boom at " + in.Where}
		},
		PresentResult: func(in boomArgs, r registry.Result) registry.View {
			at(in, "present result")
			return registry.GenericCard{Title: "boom at " + in.Where, Content: r.Content}
		},
		ConcurrencySafe: func(in boomArgs) bool {
			at(in, "concurrency")
			return true
		},
		Finalize: func(c *registry.Call, r registry.Result) []registry.Content {
			var in boomArgs
			json.Unmarshal(c.Args, &in)
			at(in, "finalize")
			return r.Content
		},
		Permission: func(_ *registry.Call, in boomArgs) *registry.Permission {
			at(in, "permission")
			return nil
		},
	}
}

// callEnd is the last status and text the editor was shown for a call.
// Updates arrive as values from the agent and as pointers from a decoded
// wire; both count.
func callEnd(us []acp.Update, id string) (acp.ToolCallStatus, string) {
	var st acp.ToolCallStatus
	var text string
	for _, u := range us {
		switch v := u.(type) {
		case *acp.ToolCall:
			u = *v
		case *acp.ToolCallUpdate:
			u = *v
		}
		switch u := u.(type) {
		case acp.ToolCall:
			if u.ToolCallID == id {
				st = u.Status
			}
		case acp.ToolCallUpdate:
			if u.ToolCallID != id {
				continue
			}
			if u.Status != nil {
				st = *u.Status
			}
			for _, c := range u.Content {
				if c.Content != nil && c.Content.Text != "" {
					text = c.Content.Text
				}
			}
		}
	}
	return st, text
}

// TestToolPanicInsideATurn: a tool that panics at any stage ends its card
// (failed, with the panic in the text, when the panic cost the result; as
// its real outcome when only a presenter or a classifier broke), the turn
// ends normally, the model is told, a concurrent sibling call is unharmed,
// and the next prompt works.
func TestToolPanicInsideATurn(t *testing.T) {
	tests := []struct {
		where  string
		status acp.ToolCallStatus
		text   string // what the final card and the model's tool message say
	}{
		{where: "run", status: acp.StatusFailed, text: `tool "boom" crashed: boom in run`},
		{where: "nil map", status: acp.StatusFailed, text: "assignment to entry in nil map"},
		{where: "nil panic", status: acp.StatusFailed, text: "panic called with nil argument"},
		{where: "error value", status: acp.StatusFailed, text: "crashed: wrapped: context deadline exceeded"},
		{where: "render", status: acp.StatusFailed, text: `tool "boom" crashed: boom in render`},
		{where: "meta", status: acp.StatusFailed, text: `tool "boom" crashed: boom in meta`},
		{where: "finalize", status: acp.StatusFailed, text: `finalizing tool "boom" crashed: boom in finalize`},
		// A broken presenter costs only the view: the generic card shows
		// the real result.
		{where: "present call", status: acp.StatusCompleted, text: "boom ran fine"},
		{where: "present result", status: acp.StatusCompleted, text: "boom ran fine"},
		// A classifier that panics means "not concurrency-safe".
		{where: "concurrency", status: acp.StatusCompleted, text: "boom ran fine"},
		// A permission check that panics asks the user (who allows here).
		{where: "permission", status: acp.StatusCompleted, text: "boom ran fine"},
	}
	for _, tt := range tests {
		t.Run(tt.where, func(t *testing.T) {
			reg := registry.New()
			registry.MustAdd(reg, boomTool())
			call := func(id, where string) string {
				b, _ := json.Marshal(map[string]any{"tool_call": map[string]any{"id": id, "name": "boom", "arguments": boomArgs{Where: where}}})
				return string(b)
			}
			// The sibling runs in the same batch, concurrently when the
			// faulty call is classified safe.
			rec := recordedScript(t, `{"responses":[
				{"parts":[`+call("faulty", tt.where)+`,`+call("sibling", "nowhere")+`]},
				{"parts":[{"text":"after the crash"}]},
				{"parts":[{"text":"still here"}]}]}`)
			a, c, sid := newTestSession(t, Options{Registry: reg, Model: rec})
			if stop := prompt(t, a, sid, "go"); stop != acp.StopEndTurn {
				t.Fatalf("stop reason %q after the panic", stop)
			}
			us := c.take()
			st, text := callEnd(us, "faulty")
			if st != tt.status || !strings.Contains(text, tt.text) {
				t.Errorf("faulty call ended %q with %q; want %q with %q", st, text, tt.status, tt.text)
			}
			if st, text := callEnd(us, "sibling"); st != acp.StatusCompleted || !strings.Contains(text, "boom ran fine") {
				t.Errorf("the sibling call ended %q with %q", st, text)
			}
			if !strings.Contains(messageText(us), "after the crash") {
				t.Errorf("the turn did not go on after the tool: %q", messageText(us))
			}
			// The model was told what happened to the call.
			rec.mu.Lock()
			second := rec.reqs[1]
			rec.mu.Unlock()
			var told string
			for _, m := range second.Messages {
				if m.Role == model.RoleTool && m.ToolCallID == "faulty" {
					told = m.Content
				}
			}
			if !strings.Contains(told, tt.text) {
				t.Errorf("the model was told %q, want it to contain %q", told, tt.text)
			}
			if tt.where == "permission" {
				c.mu.Lock()
				asked := strings.Join(c.asked, ",")
				c.mu.Unlock()
				if !strings.Contains(asked, "faulty") {
					t.Errorf("a panicking permission check did not ask; asked for %q", asked)
				}
			}

			if stop := prompt(t, a, sid, "are you there?"); stop != acp.StopEndTurn {
				t.Fatalf("the next prompt: stop reason %q", stop)
			}
			if got := messageText(c.take()); !strings.Contains(got, "still here") {
				t.Errorf("the next prompt answered %q", got)
			}
		})
	}
}
