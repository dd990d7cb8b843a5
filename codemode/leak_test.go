package codemode

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acp-bridge/acp-bridge/registry"
)

// No run leaves a goroutine behind, however it ends: the loop, the sub-call
// goroutines, the timers and the context hooks are all gone when Run returns.
func TestRunsLeakNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	cases := []struct {
		limits Limits
		code   string
		cancel bool
	}{
		{Limits{}, `return (await Promise.all([tools.sleep({v: 5}), tools.sleep({v: 5})])).length`, false},
		// Results commit in submission order, so the awaited call comes
		// first; the run settles with the two blocks in flight.
		{Limits{}, `const s = tools.sleep({v: 5}); tools.block({}); tools.block({}); await s; return 1`, false},
		{Limits{Wall: 50 * time.Millisecond}, `await Promise.all([tools.block({}), tools.block({})])`, false},
		{Limits{Compute: 20 * time.Millisecond}, `tools.block({}); await null; for (;;) {}`, false},
		{Limits{}, `await tools.block({})`, true},
		{Limits{}, `throw new Error("x")`, false},
	}
	for _, c := range cases {
		h := newRecorder(testRegistry(t))
		ctx, cancel := context.WithCancel(context.Background())
		if c.cancel {
			h.OnStart = func(*registry.Call) { cancel() }
		}
		_, _ = NewRunner(&Options{Limits: c.limits}).Run(ctx, &registry.Call{ID: "p"}, c.code, h)
		cancel()
	}
}
