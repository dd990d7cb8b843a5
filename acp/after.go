package acp

import (
	"context"
	"sync"
)

// AfterResponse runs f once the response to the request ctx belongs to has
// been written (or has failed to be). It reports false, without running f,
// when ctx is not a request context of a Conn.
//
// It exists for updates that must follow a response: after session/new the
// editor knows the session id only once it has the response, so anything
// said about the new session (an MCP server that failed to start) waits.
func AfterResponse(ctx context.Context, f func()) bool {
	a, _ := ctx.Value(afterKey{}).(*afterResponse)
	if a == nil {
		return false
	}
	a.add(f)
	return true
}

type afterKey struct{}

type afterResponse struct {
	mu   sync.Mutex
	fs   []func()
	done bool
}

func (a *afterResponse) add(f func()) {
	a.mu.Lock()
	if !a.done {
		a.fs = append(a.fs, f)
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	f() // registered after the response went out: it may run now
}

func (a *afterResponse) run() {
	a.mu.Lock()
	fs := a.fs
	a.fs, a.done = nil, true
	a.mu.Unlock()
	for _, f := range fs {
		f()
	}
}
