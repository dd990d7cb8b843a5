package agent

import (
	"context"
	"sync"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/google/go-cmp/cmp"
)

// TestCallRecorder: whatever drives a call, the recorder logs it with its
// parent, coalesces its output into fewer events than writes, flushes that
// output before the result, and drops output after it.
func TestCallRecorder(t *testing.T) {
	for _, tt := range []struct {
		name   string
		parent string
		writes int
	}{
		{"native call", "", 500},
		{"code mode sub-call", "prog", 500},
		{"silent call", "prog", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var kinds []string
			var data string
			r := newCallRecorder(func(_ context.Context, ev session.Event) {
				mu.Lock()
				defer mu.Unlock()
				switch p := ev.Payload.(type) {
				case session.ToolCall:
					kinds = append(kinds, "call:"+p.CallID+"<"+p.Parent)
				case session.ToolOutput:
					kinds = append(kinds, "output")
					data += p.Data
				case session.ToolResult:
					kinds = append(kinds, "result:"+p.CallID)
				}
			})
			c := &registry.Call{ID: "c1", Name: "bash", Parent: tt.parent, Args: []byte(`{}`)}
			r.start(t.Context(), c)
			if c.Output == nil {
				t.Fatal("start gave the call no Output")
			}
			for range tt.writes {
				c.Output([]byte("x"))
			}
			r.finish(t.Context(), c, registry.Result{})
			c.Output([]byte("late"))

			mu.Lock()
			defer mu.Unlock()
			if got, want := len(data), tt.writes; got != want {
				t.Errorf("output bytes = %d, want %d", got, want)
			}
			if n := len(kinds) - 2; tt.writes > 0 && (n < 1 || n >= tt.writes) {
				t.Errorf("%d writes gave %d output events", tt.writes, n)
			}
			if len(kinds) < 2 || kinds[0] != "call:c1<"+tt.parent || kinds[len(kinds)-1] != "result:c1" {
				t.Errorf("events = %v", kinds)
			}
			if diff := cmp.Diff(map[string]*outputCoalescer{}, r.live, cmp.AllowUnexported(outputCoalescer{})); diff != "" {
				t.Errorf("live calls after finish (-want +got):\n%s", diff)
			}
		})
	}
}
