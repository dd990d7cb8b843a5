package codemode

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/acp-bridge/acp-bridge/registry"
)

// Output is what a successful run produced: the canonical value
// {logs, result?} (codemode/DESIGN.md).
type Output struct {
	Logs []string `json:"logs"`
	// Result is the program's completion value as JSON; nil when it
	// returned nothing (undefined).
	Result json.RawMessage `json:"result,omitempty"`
	// Images are image blocks of successful sub-results, attached after the
	// run's text so the model can look at them on its next step.
	Images []registry.Content `json:"-"`
}

// NoOutput is the text of a run that printed and returned nothing.
const NoOutput = "(run_code completed with no output)"

// Text is the model-facing text: the logs, then the value (a string raw,
// anything else as indented JSON), or NoOutput.
func (o Output) Text() string {
	parts := append([]string(nil), o.Logs...)
	if o.Result != nil {
		parts = append(parts, renderValue(o.Result))
	}
	s := strings.Join(parts, "\n")
	if s == "" {
		return NoOutput
	}
	return s
}

func renderValue(v json.RawMessage) string {
	var s string
	if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Indent(&b, v, "", "  ") != nil {
		return string(v)
	}
	return b.String()
}

// FailureKind classifies a failed run.
type FailureKind string

const (
	// FailException: the program threw, or did not parse or transform.
	FailException FailureKind = "exception"
	// FailTimeout: the compute budget or the wall-clock limit ran out.
	FailTimeout FailureKind = "timeout"
	// FailAbort: the run was cancelled (session/cancel).
	FailAbort FailureKind = "abort"
	// FailOutputLimit: logs plus the value exceeded MaxOutputBytes.
	FailOutputLimit FailureKind = "output-limit"
	// FailInvalidOutput: the completion value is not lossless JSON.
	FailInvalidOutput FailureKind = "invalid-output"
)

// CodeRunFailed is the result code of a failed run.
const CodeRunFailed = "CODE_RUN_FAILED"

// RunError is a failed run. Its Error text, after the "Error: " prefix every
// failed tool result gets, is the model-facing text codemode/DESIGN.md describes.
type RunError struct {
	Kind    FailureKind
	Message string
	Logs    []string // captured before the failure
}

func (e *RunError) Error() string {
	s := "code run failed (" + string(e.Kind) + "): " + e.Message
	if len(e.Logs) > 0 {
		s += "\nCaptured output:\n" + strings.Join(e.Logs, "\n")
	}
	return s
}

// Result returns the failed tool result the model reads.
func (e *RunError) Result() registry.Result { return registry.ErrorResult(CodeRunFailed, e.Error()) }
