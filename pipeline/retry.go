package pipeline

import (
	"context"
	"slices"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
)

// retriedCodes are the failures worth another attempt when a tool's policy
// names none: a plain error from the body and a timeout. Bad arguments,
// denials, panics and aborts would fail the same way again.
var retriedCodes = []string{registry.CodeToolError, registry.CodeToolTimeout}

// Retry runs a tool that declares a retry policy again after a retryable
// failure, waiting the policy's backoff (doubled each time) in between. It
// stops as soon as the caller's context is done. Place it outside Timeout
// so every attempt gets its own deadline.
func Retry() Middleware {
	return func(d *registry.Def, next Next) Next {
		pol := d.Retry
		if pol.Attempts <= 0 {
			return next
		}
		codes := pol.Codes
		if len(codes) == 0 {
			codes = retriedCodes
		}
		return func(ctx context.Context, c *registry.Call) registry.Result {
			r := next(ctx, c)
			wait := pol.Backoff
			for range pol.Attempts {
				if !r.IsError || !slices.Contains(codes, r.Code) || ctx.Err() != nil {
					break
				}
				if wait > 0 {
					t := time.NewTimer(wait)
					select {
					case <-ctx.Done():
						t.Stop()
						return r
					case <-t.C:
					}
					wait *= 2
				}
				r = next(ctx, c)
			}
			return r
		}
	}
}
