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
	// Budget bounds the whole request, attempts and waits together
	// (default 2m): no new attempt starts that would begin after it.
	Budget time.Duration
	// MaxRetryAfter is the longest server-requested wait honoured (default
	// 60s); a longer Retry-After ends the request with the error instead.
	MaxRetryAfter time.Duration
	// Jitter is the fraction the backoff varies by, either way (default 0.2),
	// so many clients do not retry in lockstep.
	Jitter float64
	// Sleep waits d or until ctx ends; tests replace it. Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock the budget is measured with; tests replace it.
	Now func() time.Time
}

// Retry wraps p so that retryable failures (429, 5xx, dropped connections,
// stalled streams) start the request over after an exponential backoff with
// jitter, honouring Retry-After, within a time budget. Before each new
// attempt the stream yields an EventRetry. The new attempt's text and
// thoughts that repeat what was already yielded are not yielded again; if
// it answers differently, an EventDiscard voids what came before.
//
// A tool call the endpoint rejected (ErrCallRejected: Groq validates calls
// and refuses one that does not parse) is sent back at once as that call's
// failed result, with the endpoint's message, as a client sends a failed
// call back; the model writes it again, up to maxRejectedCalls times per
// request. The rejected call is not part of the answer.
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
	if o.Budget <= 0 {
		o.Budget = 2 * time.Minute
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
	if o.Now == nil {
		o.Now = time.Now
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
		start := r.o.Now()
		var shown replay
		rejected := 0
		for attempt := 1; ; attempt++ {
			var failed error
			shown.rewind()
			for ev, err := range r.p.Stream(ctx, req) {
				if err != nil {
					failed = err
					break
				}
				if !shown.pass(ev, yield) {
					return
				}
			}
			if failed == nil {
				return
			}
			var me *Error
			if errors.As(failed, &me) && me.Kind == ErrCallRejected && rejected < maxRejectedCalls && ctx.Err() == nil {
				rejected++
				req = withRejectedCall(req, me, rejected)
				if !yield(Event{Kind: EventRetry, Retry: &RetryInfo{Attempt: rejected + 1, Max: maxRejectedCalls + 1, Err: failed}}, nil) {
					return
				}
				attempt-- // not a failure of the endpoint: the retry budget stays
				continue
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
			if spent := r.o.Now().Sub(start); spent+delay > r.o.Budget {
				yield(Event{}, fmt.Errorf("gave up after %d attempts in %s: %w", attempt, spent.Round(time.Second), failed))
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

// replay tracks the text and thoughts yielded so far, so that an attempt
// that starts over does not show them twice.
type replay struct {
	segs []segment // what was yielded, consecutive chunks of a kind merged
	// The current attempt's position in segs while it repeats them.
	seg, off int
	held     []Event // the current attempt's repeated chunks, not yielded
	diverged bool    // this attempt yields everything as it comes
}

type segment struct {
	kind EventKind
	text string
}

func (r *replay) rewind() { r.seg, r.off, r.held, r.diverged = 0, 0, nil, len(r.segs) == 0 }

func (r *replay) record(kind EventKind, text string) {
	if n := len(r.segs); n > 0 && r.segs[n-1].kind == kind {
		r.segs[n-1].text += text
	} else {
		r.segs = append(r.segs, segment{kind, text})
	}
}

// pass yields ev, or the part of it that is new; false when the consumer
// stopped.
func (r *replay) pass(ev Event, yield func(Event, error) bool) bool {
	isChunk := ev.Kind == EventText || ev.Kind == EventThought
	if r.diverged {
		if isChunk {
			r.record(ev.Kind, ev.Text)
		}
		return yield(ev, nil)
	}
	if !isChunk {
		for r.seg < len(r.segs) && r.off == len(r.segs[r.seg].text) {
			r.seg, r.off = r.seg+1, 0
		}
		if r.seg < len(r.segs) {
			// The answer ended (or moved to its calls) short of what was shown.
			return r.diverge(ev, yield)
		}
		r.diverged = true
		return yield(ev, nil)
	}
	text := ev.Text
	for text != "" {
		if r.seg < len(r.segs) && r.off == len(r.segs[r.seg].text) {
			r.seg, r.off = r.seg+1, 0
		}
		if r.seg == len(r.segs) {
			// Past everything shown: the rest is new.
			r.diverged = true
			r.record(ev.Kind, text)
			return yield(Event{Kind: ev.Kind, Text: text}, nil)
		}
		s := r.segs[r.seg]
		rest := s.text[r.off:]
		n := min(len(rest), len(text))
		if s.kind != ev.Kind || rest[:n] != text[:n] {
			return r.diverge(ev, yield)
		}
		r.off += n
		text = text[n:]
	}
	r.held = append(r.held, ev)
	return true
}

// diverge voids what was shown and yields this attempt's output so far.
func (r *replay) diverge(ev Event, yield func(Event, error) bool) bool {
	held := r.held
	r.segs, r.held, r.diverged = nil, nil, true
	if !yield(Event{Kind: EventDiscard}, nil) {
		return false
	}
	for _, h := range held {
		if !r.pass(h, yield) {
			return false
		}
	}
	return r.pass(ev, yield)
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
