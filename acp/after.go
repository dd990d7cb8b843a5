package acp

import (
	"context"
	"sync"
)

// afterReplyKey carries the hooks to run once the current request's
// response is on the wire.
type afterReplyKey struct{}

type afterReply struct {
	mu    sync.Mutex
	funcs []func()
	done  bool // the response is out: later hooks run at once
}

func withAfterReply(ctx context.Context) (context.Context, *afterReply) {
	a := &afterReply{}
	return context.WithValue(ctx, afterReplyKey{}, a), a
}

func (a *afterReply) run() {
	a.mu.Lock()
	fs := a.funcs
	a.funcs, a.done = nil, true
	a.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// AfterReply runs f once the response to the request ctx belongs to has
// been written, or right away when ctx carries no request (a direct call).
// Some updates only make sense once the client knows the answer: the
// available_commands_update of a session the client learns from the
// session/new response would otherwise name a session it has not heard of.
func AfterReply(ctx context.Context, f func()) {
	if a, ok := ctx.Value(afterReplyKey{}).(*afterReply); ok {
		a.mu.Lock()
		if !a.done {
			a.funcs = append(a.funcs, f)
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
	}
	f() // no request, or its response already went out (a slow MCP server)
}
