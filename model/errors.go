package model

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrorKind classifies a failed model request; it decides whether the
// request is worth retrying and what the user is told.
type ErrorKind string

const (
	ErrAuth           ErrorKind = "auth"            // 401/403, or no key where one is required
	ErrQuota          ErrorKind = "quota"           // 402: out of credit; waiting does not help
	ErrRateLimit      ErrorKind = "rate_limit"      // 429
	ErrServer         ErrorKind = "server"          // 5xx, or an error event inside the stream
	ErrTransport      ErrorKind = "transport"       // connection reset, cut mid-stream
	ErrUnreachable    ErrorKind = "unreachable"     // connection refused, no such host, bad certificate
	ErrNotAPI         ErrorKind = "not_api"         // an HTML page or other non-API answer
	ErrStalled        ErrorKind = "stalled"         // no byte for the idle timeout
	ErrContextWindow  ErrorKind = "context_window"  // the conversation no longer fits
	ErrInvalidRequest ErrorKind = "invalid_request" // other 4xx: the request itself is wrong
	ErrMalformed      ErrorKind = "malformed"       // the response could not be understood
	// ErrCallRejected: the endpoint rejected a tool call the model wrote,
	// before any tool ran (Groq's "tool_use_failed"); Retry asks again
	// with the failure as the call's result.
	ErrCallRejected ErrorKind = "call_rejected"
)

// Error is a failed model request.
type Error struct {
	Kind   ErrorKind
	Status int    // HTTP status, 0 when none
	URL    string // the URL requested, "" when none was
	Msg    string // what the endpoint (or transport) said
	// Hint tells the user what to do, e.g. which variable to set.
	Hint string
	// KeyEnv names the variable the key is read from, for an auth failure
	// (so an agent can name the setting as its editor spells it).
	KeyEnv string
	// RetryAfter is the server's Retry-After, 0 when absent.
	RetryAfter time.Duration
	// FailedCall is what the model wrote for a rejected call
	// (ErrCallRejected), as the endpoint quoted it.
	FailedCall string
	Err        error
}

func (e *Error) Error() string {
	at := "the model endpoint"
	if e.URL != "" {
		at = e.URL
	}
	var b strings.Builder
	switch e.Kind {
	case ErrAuth:
		if e.Status == 0 {
			b.WriteString("the model endpoint needs an API key")
		} else {
			b.WriteString(at + " refused the API key")
		}
	case ErrQuota:
		b.WriteString("the model account at " + at + " is out of credit")
	case ErrRateLimit:
		b.WriteString(at + " is rate limiting requests")
	case ErrServer:
		b.WriteString(at + " failed")
	case ErrTransport:
		b.WriteString("the connection to " + at + " failed")
	case ErrUnreachable:
		b.WriteString("could not connect to " + at)
	case ErrNotAPI:
		b.WriteString(at + " is not an OpenAI-compatible API endpoint")
	case ErrStalled:
		b.WriteString("the model stream from " + at + " stalled")
	case ErrContextWindow:
		b.WriteString("the conversation is longer than the model's context window")
	case ErrInvalidRequest:
		b.WriteString(at + " rejected the request")
	case ErrCallRejected:
		b.WriteString(at + " rejected the tool call the model wrote")
	default:
		b.WriteString("the response from " + at + " could not be read")
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(strings.TrimRight(e.Msg, ". "))
	}
	if e.Hint != "" {
		b.WriteString(". ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the same request may succeed later.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case ErrRateLimit, ErrServer, ErrTransport, ErrStalled:
		return true
	}
	return false
}

// IsRetryable reports whether err is a model error worth retrying.
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Retryable()
}

// kindForStatus maps an HTTP status to an error kind.
func kindForStatus(status int, msg string) ErrorKind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ErrAuth
	case status == http.StatusPaymentRequired:
		return ErrQuota
	case status == http.StatusTooManyRequests:
		return ErrRateLimit
	case status == http.StatusRequestTimeout || status >= 500:
		return ErrServer
	case contextWindowMessage(msg):
		return ErrContextWindow
	}
	return ErrInvalidRequest
}

// contextWindowMessage spots the usual wording of "prompt too long" errors
// (OpenAI "context_length_exceeded", DeepSeek and vLLM "maximum context length").
func contextWindowMessage(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "context length") || strings.Contains(m, "context_length") ||
		strings.Contains(m, "context window") || strings.Contains(m, "too many tokens")
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date.
// Anything else, or a time in the past, is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
