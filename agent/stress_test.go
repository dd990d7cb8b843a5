package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
)

// fanOut is a model that answers a user message with n calls of the echo
// tool, and a tool result with a final text: per-session deterministic, so
// many sessions can share it.
type fanOut struct{ n int }

func (f fanOut) Stream(_ context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == model.RoleTool {
			if yield(model.Event{Kind: model.EventText, Text: "done"}, nil) {
				yield(model.Event{Kind: model.EventFinish, Finish: model.FinishStop}, nil)
			}
			return
		}
		for i := range f.n {
			args, _ := json.Marshal(map[string]int{"n": i})
			if !yield(model.Event{Kind: model.EventToolCall, ToolCall: &model.ToolCall{ID: fmt.Sprintf("c%03d", i), Name: "echo", Arguments: args}}, nil) {
				return
			}
		}
		yield(model.Event{Kind: model.EventFinish, Finish: model.FinishToolCalls}, nil)
	}
}

// TestManySessionsManyCalls: 20 sessions on one connection, each running 100
// concurrency-safe tool calls at once. Within each session no update is lost
// or reordered (cards appear before their results, results in model order),
// and no goroutine is left behind once the connection is closed.
func TestManySessionsManyCalls(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const sessions, calls = 20, 100
	reg := registry.New()
	type echoIn struct {
		N int `json:"n"`
	}
	registry.MustAdd(reg, registry.Tool[echoIn, string]{
		Name: "echo", Description: "echo n",
		Run: func(_ context.Context, c *registry.Call, in echoIn) (string, error) {
			c.Output([]byte(fmt.Sprintf("output %d\n", in.N)))
			return fmt.Sprint(in.N), nil
		},
		ConcurrencySafe: func(echoIn) bool { return true },
	})
	// A subtest, so the editor's cleanup (closing the connection) runs
	// before the leak check.
	t.Run("load", func(t *testing.T) {
		e := newEditor(t, Options{Registry: reg, Model: fanOut{n: calls}})
		ids := make([]string, sessions)
		for i := range ids {
			ids[i] = e.newSession(t.TempDir())
		}
		var wg sync.WaitGroup
		for _, sid := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if stop, err := e.prompt(sid, "go"); err != nil || stop != acp.StopEndTurn {
					t.Errorf("session %s: stop=%q err=%v", sid, stop, err)
				}
			}()
		}
		wg.Wait()
		// Group every update by session, in arrival order.
		bySession := map[string][]acp.Update{}
		e.mu.Lock()
		for i, u := range e.upds {
			bySession[e.sids[i]] = append(bySession[e.sids[i]], u)
		}
		e.mu.Unlock()
		for _, sid := range ids {
			carded := map[string]bool{}
			var completed []string
			for _, u := range bySession[sid] {
				switch u := u.(type) {
				case *acp.ToolCall:
					carded[u.ToolCallID] = true
				case *acp.ToolCallUpdate:
					if !carded[u.ToolCallID] {
						t.Fatalf("session %s: update for %s before its card", sid, u.ToolCallID)
					}
					if u.Status != nil && *u.Status == acp.StatusCompleted {
						completed = append(completed, u.ToolCallID)
					}
				}
			}
			if len(carded) != calls || len(completed) != calls {
				t.Fatalf("session %s: %d cards, %d completed; want %d", sid, len(carded), len(completed), calls)
			}
			for i, id := range completed {
				if id != fmt.Sprintf("c%03d", i) {
					t.Fatalf("session %s: result %d is %s: results out of model order", sid, i, id)
				}
			}
		}
	})
}
