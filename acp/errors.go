package acp

import (
	"context"
	"errors"
	"fmt"
)

// JSON-RPC and ACP error codes (JSON-RPC 2.0 reserved codes, and the ACP schema's own).
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeAuthRequired     = -32000
	CodeResourceNotFound = -32002
	CodeRequestCancelled = -32800
)

// Error is a protocol error with a JSON-RPC code. Handlers return it (wrapped
// or not); the connection turns it into the wire error at one boundary.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidParams is the error for parameters that do not fit the method.
func InvalidParams(format string, args ...any) *Error {
	return Errorf(CodeInvalidParams, format, args...)
}

// toWireError maps any error to the protocol error sent on the wire. A plain
// error never goes out as code 0: it becomes an internal error.
func toWireError(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, context.Canceled):
		return &Error{Code: CodeRequestCancelled, Message: "request cancelled"}
	default:
		return &Error{Code: CodeInternalError, Message: "internal error: " + err.Error()}
	}
}
