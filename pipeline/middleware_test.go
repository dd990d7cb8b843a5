package pipeline

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
)

func TestTimeoutMiddleware(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		work    time.Duration // how long the body takes if not cancelled
		parent  time.Duration // cancel the caller after this long (0: never)
		text    string
		code    string
	}{
		{name: "fast enough", timeout: time.Second, work: time.Millisecond, text: "done"},
		{name: "times out", timeout: 250 * time.Millisecond, work: time.Hour, text: "Error: tool call timed out, stopped after 250ms: the t tool's own limit", code: "TOOL_TIMEOUT"},
		// The bubble's fake clock lets a body run its full hour instantly.
		{name: "no timeout declared", work: time.Hour, text: "done"},
		{name: "the caller cancels first", timeout: time.Hour, work: time.Hour, parent: time.Second, text: "Error: tool call aborted", code: "ABORTED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var drained bool
				d := newDef(t, registry.Tool[args, string]{Timeout: tt.timeout,
					Run: func(ctx context.Context, _ *registry.Call, _ args) (string, error) {
						defer func() { drained = true }()
						select {
						case <-time.After(tt.work):
							return "done", nil
						case <-ctx.Done():
							// A cooperative body takes a moment to stop.
							time.Sleep(10 * time.Millisecond)
							return "", ctx.Err()
						}
					}})
				ctx := t.Context()
				if tt.parent > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.parent)
					defer cancel()
				}
				r := New(&Options{Middleware: []Middleware{Timeout()}}).Execute(ctx, d, call(`{}`))
				if r.Text() != tt.text || r.Code != tt.code {
					t.Fatalf("result %q %q, want %q %q", r.Text(), r.Code, tt.text, tt.code)
				}
				if !drained {
					t.Fatal("returned before the body finished")
				}
			})
		})
	}
}

func TestRetryMiddleware(t *testing.T) {
	tests := []struct {
		name     string
		policy   registry.RetryPolicy
		failures int   // the body fails this many times, then succeeds
		err      error // what it fails with
		calls    int
		text     string
		elapsed  time.Duration
	}{
		{name: "not retryable", failures: 1, err: errors.New("flaky"), calls: 1, text: "Error: flaky"},
		{name: "recovers", policy: registry.RetryPolicy{Attempts: 3, Backoff: 100 * time.Millisecond}, failures: 2, err: errors.New("flaky"),
			calls: 3, text: "ok", elapsed: 300 * time.Millisecond},
		{name: "gives up", policy: registry.RetryPolicy{Attempts: 2}, failures: 5, err: errors.New("down"), calls: 3, text: "Error: down"},
		{name: "code not retried", policy: registry.RetryPolicy{Attempts: 3}, failures: 5, err: registry.Errorf("NOT_FOUND", "gone"), calls: 1, text: "Error: gone"},
		{name: "declared codes", policy: registry.RetryPolicy{Attempts: 3, Codes: []string{"BUSY"}}, failures: 1, err: registry.Errorf("BUSY", "busy"), calls: 2, text: "ok"},
		{name: "declared codes replace the default", policy: registry.RetryPolicy{Attempts: 3, Codes: []string{"BUSY"}}, failures: 1, err: errors.New("plain"), calls: 1, text: "Error: plain"},
		{name: "success is not retried", policy: registry.RetryPolicy{Attempts: 3}, calls: 1, text: "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				d := newDef(t, registry.Tool[args, string]{Retry: tt.policy,
					Run: func(context.Context, *registry.Call, args) (string, error) {
						calls++
						if calls <= tt.failures {
							return "", tt.err
						}
						return "ok", nil
					}})
				start := time.Now()
				r := New(&Options{Middleware: []Middleware{Retry(), Timeout()}}).Execute(t.Context(), d, call(`{}`))
				if r.Text() != tt.text || calls != tt.calls {
					t.Fatalf("result %q after %d calls, want %q after %d", r.Text(), calls, tt.text, tt.calls)
				}
				if got := time.Since(start); got != tt.elapsed {
					t.Fatalf("took %v, want %v of backoff", got, tt.elapsed)
				}
			})
		})
	}
}

func TestRetryGetsAFreshDeadlineEachAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		d := newDef(t, registry.Tool[args, string]{Timeout: time.Second, Retry: registry.RetryPolicy{Attempts: 1},
			Run: func(ctx context.Context, _ *registry.Call, _ args) (string, error) {
				calls++
				if calls == 1 {
					<-ctx.Done()
					return "", ctx.Err()
				}
				return "second try", nil
			}})
		r := New(&Options{Middleware: []Middleware{Retry(), Timeout()}}).Execute(t.Context(), d, call(`{}`))
		if r.Text() != "second try" || calls != 2 {
			t.Fatalf("%q after %d calls", r.Text(), calls)
		}
	})
}

func TestRetryStopsWhenCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		calls := 0
		d := newDef(t, registry.Tool[args, string]{Retry: registry.RetryPolicy{Attempts: 5, Backoff: 100 * time.Millisecond},
			Run: func(context.Context, *registry.Call, args) (string, error) {
				calls++
				return "", errors.New("flaky")
			}})
		start := time.Now()
		r := New(&Options{Middleware: []Middleware{Retry()}}).Execute(ctx, d, call(`{}`))
		// Attempt at 0 and 100ms; cancelled during the 200ms backoff.
		if calls != 2 || r.Text() != "Error: flaky" || time.Since(start) != 150*time.Millisecond {
			t.Fatalf("%q after %d calls and %v", r.Text(), calls, time.Since(start))
		}
	})
}
