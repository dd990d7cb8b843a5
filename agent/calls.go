package agent

import (
	"context"
	"sync"

	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// callRecorder is the one owner of a session's tool calls on the agent
// side. Every call, whichever driver runs it, has the same life here:
//
//   - start: the call is logged (tool/call; its card goes up) right before
//     it enters the pipeline, and a live-output coalescer (output.go)
//     becomes its Output;
//   - finish: the coalescer is closed, so pending output goes out before
//     the final update and nothing after it, and the result is logged
//     (tool/result).
//
// The drivers only adapt their hook shapes to these two steps: a model's
// calls run through pipeline.ExecuteBatch (Hooks.Logged, Hooks.Done; see
// runTools), a Code Mode program's sub-calls through the run's bridge
// (codemode.Host Start and Finish; see codeHost). So a sub-call's output
// is coalesced exactly like a native call's.
//
// Ids: a call is known everywhere by its card id (registry.Call.ID), which
// is unique in the session. A model's call gets it when its response is
// logged (state.cardIDs: the endpoint's id, with a -N suffix where the
// endpoint repeated one; the model reads its own id back), a sub-call from
// its run (codemode: "<run_code card id>:code:<n>"), /init's call from its
// turn ("init_<turn>"). Every id is taken from one of those, never made up
// here, and the recorder keys its live calls by it.
type callRecorder struct {
	emit func(context.Context, session.Event)

	mu   sync.Mutex                  // guards live; taken alone (never while emitting)
	live map[string]*outputCoalescer // started calls without a result, by card id
}

func newCallRecorder(emit func(context.Context, session.Event)) *callRecorder {
	return &callRecorder{emit: emit, live: map[string]*outputCoalescer{}}
}

// start logs c and gives it its live output. ctx is the driver's: output
// and the events outlive its cancellation (emit sends regardless).
//
// A tool that previews its calls (an edit: the hunks it would apply, from
// the file as it is now) has its preview computed here, so the first card,
// and a permission request after it, show what will be applied.
func (r *callRecorder) start(ctx context.Context, c *registry.Call) {
	preview := c.Decoded().Preview(ctx, c)
	r.emit(ctx, session.New(session.ToolCall{CallID: c.ID, Name: c.Name, Args: c.Args, Parent: c.Parent, Agent: c.Agent, Preview: preview, Input: c.Decoded()}))
	id := c.ID
	out := newOutputCoalescer(func(data string) {
		r.emit(ctx, session.New(session.ToolOutput{CallID: id, Data: data}))
	}, OutputInterval, mapping.MaxOutputChunk)
	r.mu.Lock()
	old := r.live[id]
	r.live[id] = out
	r.mu.Unlock()
	if old != nil {
		old.Close() // an id started twice: the first one's output ends here
	}
	c.Output = out.Write
}

// finish flushes and closes c's live output, then logs its result. A call
// that was never started (its driver's start hook failed) is still closed.
func (r *callRecorder) finish(ctx context.Context, c *registry.Call, res registry.Result) {
	r.mu.Lock()
	out := r.live[c.ID]
	delete(r.live, c.ID)
	r.mu.Unlock()
	if out != nil {
		out.Close()
	}
	r.emit(ctx, session.New(session.ToolResult{CallID: c.ID, Result: res}))
}
