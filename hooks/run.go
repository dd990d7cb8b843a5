package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/acp-bridge/acp-bridge/tools/bash"
)

// Input is what a hook reads on stdin, named as Claude Code names it.
type Input struct {
	SessionID string          `json:"session_id"`
	Cwd       string          `json:"cwd"`
	Event     Event           `json:"hook_event_name"`
	ToolName  string          `json:"tool_name,omitempty"`
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
	// CallID is the tool call's id (the card's).
	CallID       string    `json:"tool_call_id,omitempty"`
	ToolResponse *Response `json:"tool_response,omitempty"`
	Prompt       string    `json:"prompt,omitempty"`
	StopReason   string    `json:"stop_reason,omitempty"`
}

// Response is a finished call, as a PostToolUse hook reads it.
type Response struct {
	Text    string `json:"text"` // what the model reads
	IsError bool   `json:"is_error"`
	Code    string `json:"code,omitempty"` // the failure code (DENIED, TOOL_TIMEOUT, …)
}

// Decision is what a hook decided; "" lets things go on as they would.
type Decision string

const (
	Allow Decision = "allow" // PreToolUse: run without asking
	Deny  Decision = "deny"  // PreToolUse: refuse, with Reason for the model
	Ask   Decision = "ask"   // PreToolUse: ask the user, with Reason
	Block Decision = "block" // PostToolUse: fail the call with Reason; UserPromptSubmit: drop the prompt; Stop: noted
)

// Outcome is one hook's answer.
type Outcome struct {
	Decision Decision
	Reason   string
	// Context is additional context for the model: PostToolUse's
	// additionalContext, UserPromptSubmit's stdout.
	Context string
	// Failure says why the hook gave no answer: it could not start, exited
	// with a status other than 0 and 2, timed out, or wrote stdout that is
	// not the JSON it should be. A failed hook decides nothing; the caller
	// reports it.
	Failure string
}

// answer is the JSON a hook may write on stdout. Both Claude Code's
// top-level fields and its hookSpecificOutput are read.
type answer struct {
	Decision          string `json:"decision"`
	Reason            string `json:"reason"`
	AdditionalContext string `json:"additionalContext"`
	Specific          struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		AdditionalContext        string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// Run runs one hook and reads its answer. Exit status 0 is success (with
// an optional JSON answer on stdout); 2 denies (PreToolUse) or blocks (the
// others), with stderr as the reason; anything else, or no exit within the
// hook's timeout, is a failure. env is added to the hook's environment.
func Run(ctx context.Context, h *Hook, in Input, env []string) Outcome {
	in.Event = h.Event
	stdin, err := json.Marshal(in)
	if err != nil {
		return Outcome{Failure: fmt.Sprintf("%s: its input could not be encoded: %v", h.Name(), err)}
	}
	stdin = append(stdin, '\n') // one line: `read` in a hook gets it whole
	out, err := bash.Exec(ctx, bash.Script{Command: h.Command, Dir: in.Cwd, Stdin: stdin, Timeout: h.timeout(),
		Env: append([]string{"ACP_BRIDGE_PROJECT_DIR=" + in.Cwd, "ACP_BRIDGE_HOOK_EVENT=" + string(h.Event)}, env...)})
	stderr := strings.TrimSpace(out.Stderr.Text)
	switch {
	case err != nil && ctx.Err() != nil:
		return Outcome{Failure: fmt.Sprintf("%s was stopped: the turn was cancelled", h.Name())}
	case err != nil:
		return Outcome{Failure: fmt.Sprintf("%s could not run: %v", h.Name(), err)}
	case out.TimedOut:
		return Outcome{Failure: fmt.Sprintf("%s did not finish within %s and was stopped", h.Name(), h.timeout())}
	case out.Signal != "":
		return Outcome{Failure: fmt.Sprintf("%s was killed by %s", h.Name(), out.Signal)}
	case out.ExitCode == nil:
		return Outcome{Failure: fmt.Sprintf("%s ended without an exit status", h.Name())}
	}
	switch code := *out.ExitCode; code {
	case 0:
		return parse(h, strings.TrimSpace(out.Stdout.Text))
	case 2:
		reason := stderr
		if reason == "" {
			reason = fmt.Sprintf("%s refused (exit status 2) without saying why", h.Name())
		}
		if h.Event == PreToolUse {
			return Outcome{Decision: Deny, Reason: reason}
		}
		return Outcome{Decision: Block, Reason: reason}
	default:
		msg := fmt.Sprintf("%s exited with status %d", h.Name(), code)
		if stderr != "" {
			msg += ": " + firstLines(stderr, 5)
		}
		return Outcome{Failure: msg}
	}
}

// parse reads the stdout of a hook that exited 0.
func parse(h *Hook, stdout string) Outcome {
	if !strings.HasPrefix(stdout, "{") {
		if h.Event == UserPromptSubmit {
			return Outcome{Context: stdout} // plain text is context for the prompt
		}
		return Outcome{}
	}
	var a answer
	dec := json.NewDecoder(bytes.NewReader([]byte(stdout)))
	if err := dec.Decode(&a); err != nil {
		return Outcome{Failure: fmt.Sprintf("%s wrote stdout that is not a JSON answer: %v", h.Name(), err)}
	}
	o := Outcome{Reason: a.Reason, Context: a.AdditionalContext}
	if a.Specific.AdditionalContext != "" {
		o.Context = a.Specific.AdditionalContext
	}
	d := a.Decision
	if a.Specific.PermissionDecision != "" {
		d, o.Reason = a.Specific.PermissionDecision, a.Specific.PermissionDecisionReason
	}
	switch strings.ToLower(d) {
	case "":
	case "allow", "approve":
		o.Decision = Allow
	case "deny":
		o.Decision = Deny
	case "ask":
		o.Decision = Ask
	case "block":
		o.Decision = Block
		if h.Event == PreToolUse {
			o.Decision = Deny
		}
	default:
		return Outcome{Failure: fmt.Sprintf("%s answered an unknown decision %q", h.Name(), d)}
	}
	if err := allowed(h.Event, o.Decision); err != nil {
		return Outcome{Failure: fmt.Sprintf("%s answered %v", h.Name(), err)}
	}
	if (o.Decision == Deny || o.Decision == Block) && o.Reason == "" {
		o.Reason = fmt.Sprintf("%s refused without saying why", h.Name())
	}
	return o
}

func allowed(ev Event, d Decision) error {
	switch {
	case d == "":
		return nil
	case ev == PreToolUse && d != Block:
		return nil
	case ev != PreToolUse && d == Block:
		return nil
	}
	return errors.New(string(d) + ", which a " + string(ev) + " hook cannot decide")
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}
