package agent

import (
	"context"
	"fmt"
	"slices"
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
// (codemode.Host Start and Finish; see codeHost), a subagent's calls
// through its own ExecuteBatch (subagent.Spec Start and Finish; see
// subagents.Launch). So a sub-call's output is coalesced exactly like a
// native call's.
//
// Ids: one scheme for every call (registry/callid.go), and the recorder
// gives the top-level ones (ids): a model's call gets the endpoint's id,
// /init's call "init", each with a -N suffix where the session used it
// already, checked against every id the folded log holds (taken), so ids
// stay unique across a reload and old logs' forms count too. A call
// another call made (a Code Mode sub-call, a subagent's) is named by its
// maker with registry.ChildID; it names its parent. Every part that
// follows a call keys it by that id.
type callRecorder struct {
	emit func(context.Context, session.Event)
	// taken reports whether the session's log has a call with this id
	// (the folded state's; it takes the session's mu itself); nil: none.
	taken func(id string) bool

	mu sync.Mutex // guards live; taken alone (never while emitting)
	// live is the output of the calls started here and not yet finished,
	// by id: only what their output needs. Which calls are open is the
	// folded state's (opencalls.go).
	live map[string]*outputCoalescer
}

func newCallRecorder(emit func(context.Context, session.Event)) *callRecorder {
	return &callRecorder{emit: emit, live: map[string]*outputCoalescer{}}
}

// ids gives top-level calls their ids, one for each id their maker wants
// (the endpoint's, a command's name): that id, unless the session or an
// earlier one of wants has it already, then the first free "<id>-<n>"
// (n from 2). One turn makes top-level calls at a time, so an id given
// here is logged before the next ids call.
func (r *callRecorder) ids(wants ...string) []string {
	out := make([]string, len(wants))
	used := func(id string) bool { return slices.Contains(out, id) || r.taken != nil && r.taken(id) }
	for i, want := range wants {
		id := want
		for n := 2; id == "" || used(id); n++ {
			id = fmt.Sprintf("%s-%d", want, n)
		}
		out[i] = id
	}
	return out
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
