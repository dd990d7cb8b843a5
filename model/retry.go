package model

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"time"
)

// RetryOptions configure Retry. Zero values take the defaults.
type RetryOptions struct {
	Retries   int           // retries after the first attempt (default 5; negative: none)
	BaseDelay time.Duration // first backoff (default 500ms), doubled each retry
	MaxDelay  time.Duration // backoff cap (default 10s)
	// MaxRetryAfter is the longest server-requested wait honoured (default
	// 60s); a longer Retry-After ends the request with the error instead.
	MaxRetryAfter time.Duration
	// Jitter is the fraction the backoff varies by, either way (default 0.2),
	// so many clients do not retry in lockstep.
	Jitter float64
	// Sleep waits d or until ctx ends; tests replace it. Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Retry wraps p so that retryable failures (429, 5xx, transport errors,
// stalled streams) start the request over after an exponential backoff with
// jitter, honouring Retry-After. Before each new attempt the stream yields an
// EventRetry: what came before it is void, and the consumer should say so.
func Retry(p Provider, o RetryOptions) Provider {
	if o.Retries == 0 {
		o.Retries = 5
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = 500 * time.Millisecond
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 10 * time.Second
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = time.Minute
	}
	if o.Jitter <= 0 {
		o.Jitter = 0.2
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	return &retrying{p: p, o: o}
}

type retrying struct {
	p Provider
	o RetryOptions
}

// Unwrap returns the wrapped provider.
func (r *retrying) Unwrap() Provider { return r.p }

func (r *retrying) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		maxAttempt := r.o.Retries + 1
		for attempt := 1; ; attempt++ {
			var failed error
			for ev, err := range r.p.Stream(ctx, req) {
				if err != nil {
					failed = err
					break
				}
				if !yield(ev, nil) {
					return
				}
			}
			if failed == nil {
				return
			}
			if ctx.Err() != nil || !IsRetryable(failed) || attempt >= maxAttempt {
				if attempt > 1 && IsRetryable(failed) && ctx.Err() == nil {
					failed = fmt.Errorf("gave up after %d attempts: %w", attempt, failed)
				}
				yield(Event{}, failed)
				return
			}
			delay := r.delay(attempt, failed)
			if delay < 0 {
				yield(Event{}, failed) // the server asked for a longer wait than we allow
				return
			}
			if !yield(Event{Kind: EventRetry, Retry: &RetryInfo{Attempt: attempt + 1, Max: maxAttempt, Delay: delay, Err: failed}}, nil) {
				return
			}
			if err := r.o.Sleep(ctx, delay); err != nil {
				yield(Event{}, err)
				return
			}
		}
	}
}

// delay is the wait before the attempt after attempt: the server's
// Retry-After when it gave one, else base·2^(attempt-1) capped, ± jitter.
// It is negative when Retry-After is longer than MaxRetryAfter.
func (r *retrying) delay(attempt int, err error) time.Duration {
	var me *Error
	if errors.As(err, &me) && me.RetryAfter > 0 {
		if me.RetryAfter > r.o.MaxRetryAfter {
			return -1
		}
		return me.RetryAfter
	}
	d := r.o.BaseDelay << min(attempt-1, 20)
	if d > r.o.MaxDelay || d <= 0 {
		d = r.o.MaxDelay
	}
	f := 1 + r.o.Jitter*(2*rand.Float64()-1)
	return time.Duration(float64(d) * f)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
