package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
)

var errToolTimeout = errors.New("tool call timed out")

// Timeout is the timeout policy: for a tool that declares a Timeout it
// gives the body a context with that deadline and, when the deadline is what
// ended the call, replaces the result with TOOL_TIMEOUT. It is cooperative:
// the body is cancelled, never abandoned, so it is still waited for.
func Timeout() Middleware {
	return TimeoutBy(func(d *registry.Def) (time.Duration, string) {
		return d.Timeout, fmt.Sprintf("the %s tool's own limit", d.Name)
	})
}

// TimeoutBy is Timeout with the limit chosen per tool by limit (the user's
// configured timeouts, falling back to the tool's own), and where it was
// set, which the failure names (registry.StoppedAfter) so the user knows
// what to change; 0 or less: no limit. The replaced result keeps the
// display meta of what ran before the deadline (a command's output so far).
func TimeoutBy(limit func(d *registry.Def) (time.Duration, string)) Middleware {
	return func(d *registry.Def, next Next) Next {
		t, where := limit(d)
		if t <= 0 {
			return next
		}
		return func(ctx context.Context, c *registry.Call) registry.Result {
			tctx, cancel := context.WithTimeoutCause(ctx, t, errToolTimeout)
			defer cancel()
			r := next(tctx, c)
			if ctx.Err() == nil && context.Cause(tctx) == errToolTimeout {
				tr := registry.ErrorResult(registry.CodeToolTimeout, "tool call timed out, "+registry.StoppedAfter(t, where))
				tr.Meta = r.Meta
				return tr
			}
			return r
		}
	}
}
