package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acp-bridge/acp-bridge/internal/jobs"
)

// Content is one model-facing content block of a tool result.
type Content struct {
	Type     string `json:"type"`           // "text" | "image" | "resource" | "resource_link"
	Text     string `json:"text,omitempty"` // text; a text resource's contents
	Data     string `json:"data,omitempty"` // base64: an image, a binary resource's blob
	MimeType string `json:"mimeType,omitempty"`
	URI      string `json:"uri,omitempty"`  // resource, resource_link
	Name     string `json:"name,omitempty"` // resource_link
}

// Text returns a text content block.
func Text(s string) Content { return Content{Type: "text", Text: s} }

// Result is the outcome of one tool call as the model and the log see it.
type Result struct {
	Content []Content `json:"content"`
	IsError bool      `json:"isError,omitempty"`
	// Code classifies failures: INVALID_ARGS, UNKNOWN_TOOL, TOOL_TIMEOUT, ABORTED, ...
	Code string `json:"code,omitempty"`
	// Meta is display data stored at execution time (exit status, applied
	// hunks) so presenters stay pure and replay needs no I/O.
	Meta json.RawMessage `json:"meta,omitempty"`
	// Context is additional context for the model (from post-execute
	// hooks), delivered after the tool results of the step.
	Context []string `json:"context,omitempty"`
	// EndTurn: the turn ends after this step's results (a question the
	// user could not be asked in the editor waits for their next message).
	EndTurn bool `json:"endTurn,omitempty"`
	// Value is the body's typed value (Out), for Code Mode bindings. It
	// stays in the executing process: the log never stores it.
	Value any `json:"-"`
}

// ErrorResult is a failed result with the "Error: " text the model reads.
func ErrorResult(code, message string) Result {
	return Result{Content: []Content{Text("Error: " + message)}, IsError: true, Code: code}
}

// Text joins the text blocks of a result, with text resources and links
// spelled out (MCP tools return them) so the model reads them too.
func (r Result) Text() string {
	var s string
	for _, c := range r.Content {
		switch c.Type {
		case "text":
			s += c.Text
		case "resource":
			if c.Data != "" {
				s += fmt.Sprintf("\n[binary resource uri=%q omitted]\n", c.URI)
			} else {
				s += fmt.Sprintf("\n<resource uri=%q>\n%s\n</resource>\n", c.URI, c.Text)
			}
		case "resource_link":
			s += fmt.Sprintf("\n[resource_link name=%q uri=%q]\n", c.Name, c.URI)
		}
	}
	return s
}

// Error is a tool failure with a code. A tool body returns it (or any error)
// to fail the call; the call still succeeds as an RPC.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf is shorthand for a coded tool error.
func Errorf(code, message string) *Error { return &Error{Code: code, Message: message} }

// Files reads and writes text files. The agent implements it: through the
// editor (unsaved buffers, review UI) when the client offers it, else the disk.
type Files interface {
	ReadText(ctx context.Context, path string) (string, error)
	WriteText(ctx context.Context, path, content string) error
}

// ErrShutdown is the cause of a call's context when the whole agent is
// stopping because the editor went away: a tool that stops child processes
// may skip its grace period, since nobody waits for a clean result.
var ErrShutdown = errors.New("acp-bridge is shutting down: the editor disconnected")

// Asker puts a question to the user through the editor and waits for the
// answer.
type Asker interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// Question is one question: a choice among Options, or a short free
// answer when there are none.
type Question struct {
	Text    string
	Options []string
}

// Answer is the user's: Action "accept" with Answer, or "decline" or
// "cancel".
type Answer struct {
	Action string
	Answer string
}

// Call carries what a running tool may use. The agent fills it in.
type Call struct {
	ID     string // unique in the session (callid.go)
	Name   string
	Parent string // the call that made this one (a Code Mode program's run_code, a subagent's task); "" for a top-level call
	// Agent is the subagent (its profile's name) whose model made the
	// call; "" for the session's own.
	Agent  string
	Args   json.RawMessage // frozen once logged
	Cwd    string          // absolute session root
	Roots  []string        // cwd plus additional directories
	Files  Files           // nil: use the disk
	Output func([]byte)    // live output (bash); nil when nobody listens
	// Jobs is the session's background work (commands run in the
	// background), which outlives the call and ends with the session;
	// nil where there is none.
	Jobs *jobs.Table
	Ask  Asker // the user, when the editor can be asked (elicitation); nil otherwise
	// Rules is the session's permission rules, for a tool that asks them
	// again about what it reaches on its own (memo.go); nil: no rules.
	Rules RuleChecker
	// Memo is the session's short-lived memory for tools; nil: none.
	Memo *Memo

	// input is Args decoded by the tool (Def.Input): made once, read by
	// every stage after.
	input *Input
}

// ArgsJSON is the one "valid JSON or quote it" rule for a model's
// arguments: valid JSON is returned as it is, anything else (a model's
// broken JSON, nothing at all) as a JSON string of its bytes. So a logged
// call stays valid JSON, validation fails it as INVALID_ARGS, and its card
// still shows what the model wrote.
func ArgsJSON(b json.RawMessage) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	q, _ := json.Marshal(string(b))
	return q
}
