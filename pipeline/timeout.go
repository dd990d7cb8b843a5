package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/acp-bridge/acp-bridge/registry"
)

var errToolTimeout = errors.New("tool call timed out")

// Timeout is the timeout policy: for a tool that declares a Timeout it
// gives the body a context with that deadline and, when the deadline is what
// ended the call, replaces the result with TOOL_TIMEOUT. It is cooperative:
// the body is cancelled, never abandoned, so it is still waited for.
func Timeout() Middleware {
	return func(d *registry.Def, next Next) Next {
		if d.Timeout <= 0 {
			return next
		}
		return func(ctx context.Context, c *registry.Call) registry.Result {
			tctx, cancel := context.WithTimeoutCause(ctx, d.Timeout, errToolTimeout)
			defer cancel()
			r := next(tctx, c)
			if ctx.Err() == nil && context.Cause(tctx) == errToolTimeout {
				return registry.ErrorResult(registry.CodeToolTimeout, fmt.Sprintf("tool call timed out after %dms", d.Timeout.Milliseconds()))
			}
			return r
		}
	}
}
