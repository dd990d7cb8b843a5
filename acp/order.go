package acp

import (
	"context"
	"sync"
)

// Requests run concurrently (conn.go), so two prompts the client sent one
// after the other could reach the agent in either order: a client that
// queues the user's messages (codecompanion, the AI SDK provider) would see
// them answered out of order. Requests of an ordered method therefore take
// their place in the order they arrived: each waits until every earlier
// ordered request has been admitted (or has returned) before its handler
// runs, and is admitted when its handler calls Admitted (a prompt, once it
// holds the turn or its place in the queue) or returns. Only admission is
// ordered; the work after it runs concurrently as before.

type admissionKey struct{}

// admission is one ordered request's place in line.
type admission struct {
	prev <-chan struct{} // closed once every earlier ordered request is admitted
	mine chan struct{}   // closed once this one is (after prev)
	once sync.Once
}

func (a *admission) admit() { a.once.Do(func() { close(a.mine) }) }

// Admitted marks the request ctx belongs to as having taken its place, so
// the next ordered request may go ahead. It is a no-op for a request of an
// unordered method or a direct call.
func Admitted(ctx context.Context) {
	if a, ok := ctx.Value(admissionKey{}).(*admission); ok {
		a.admit()
	}
}

// queue hands out places in arrival order. It is used from the read loop
// only (Conn.handle), which is what makes the order the arrival order.
type queue struct {
	last chan struct{}
}

func (q *queue) enter(ctx context.Context) (context.Context, *admission) {
	if q.last == nil {
		q.last = make(chan struct{})
		close(q.last)
	}
	a := &admission{prev: q.last, mine: make(chan struct{})}
	q.last = a.mine
	return context.WithValue(ctx, admissionKey{}, a), a
}

type acceptedKey struct{}

// Accepted marks a prompt as having its place in the conversation: its
// user message is logged. A v2
// connection answers session/prompt then (v2conn.go) and Accepted returns
// once the answer is written, so the answer comes between the user
// message's update and the turn's next. It is a no-op outside a v2 prompt.
func Accepted(ctx context.Context) {
	if f, ok := ctx.Value(acceptedKey{}).(func()); ok {
		f()
	}
}
