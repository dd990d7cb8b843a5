package registry

// Failure codes of tool results (Result.Code). They are part of what the
// model and the log see, so they are named once here and matched by name.
const (
	// CodeInvalidArgs: the arguments are not JSON or fail the parameter schema.
	CodeInvalidArgs = "INVALID_ARGS"
	// CodeUnknownTool: no visible tool has the name, or (code mode) it is
	// callable only from a run_code program.
	CodeUnknownTool = "UNKNOWN_TOOL"
	// CodeToolError: the body returned a plain error.
	CodeToolError = "TOOL_ERROR"
	// CodeToolPanic: the body, or its finalize, panicked.
	CodeToolPanic = "TOOL_PANIC"
	// CodeToolTimeout: the timeout middleware's deadline ended the call.
	CodeToolTimeout = "TOOL_TIMEOUT"
	// CodeAborted: the call was cancelled after its body started.
	CodeAborted = "ABORTED"
	// CodeAbortedBeforeDispatch: the call was cancelled before its body started.
	CodeAbortedBeforeDispatch = "ABORTED_BEFORE_DISPATCH"
	// CodeInvalidOutput: the body's value (or a replacement) fails the output schema.
	CodeInvalidOutput = "INVALID_OUTPUT"
	// CodeInvalidToolOutput: what the tool produced cannot be stored: its
	// display meta is not JSON.
	CodeInvalidToolOutput = "INVALID_TOOL_OUTPUT"
	// CodeInvalidValue: a value fails a structured schema (Structured.Validate).
	CodeInvalidValue = "INVALID_VALUE"
	// CodeUnsupportedSchema: a schema is outside the structured subset.
	CodeUnsupportedSchema = "UNSUPPORTED_SCHEMA"

	// Policy outcomes, set by package pipeline.
	CodeDenied              = "DENIED"
	CodeRejected            = "REJECTED"
	CodeApprovalCancelled   = "APPROVAL_CANCELLED"
	CodeApprovalUnavailable = "APPROVAL_UNAVAILABLE"
	CodeGateFailed          = "GATE_FAILED"
	CodeGuardFailed         = "GUARD_FAILED"
	CodeMiddlewarePanic     = "MIDDLEWARE_PANIC"
	CodeArgsRewritten       = "ARGS_REWRITTEN"
	CodeBlocked             = "BLOCKED"
	CodePostExecuteFailed   = "POST_EXECUTE_FAILED"
)
