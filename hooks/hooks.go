// Package hooks runs the commands users configure at the pipeline's seams:
// before a tool call (PreToolUse), after it (PostToolUse), when a prompt is
// submitted (UserPromptSubmit) and when a turn ends (Stop). A hook gets the
// event as JSON on stdin and answers with its exit status and, optionally,
// JSON on stdout; this package turns that into an Outcome. It runs hooks the
// way the bash tool runs commands (tools/bash.Exec: a process group that
// dies with the bridge, no credentials in the environment, a time limit),
// and knows nothing of what the agent does with the answer.
package hooks

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Event names a seam, as Claude Code's hooks name them.
type Event string

const (
	PreToolUse       Event = "PreToolUse"
	PostToolUse      Event = "PostToolUse"
	UserPromptSubmit Event = "UserPromptSubmit"
	Stop             Event = "Stop"
)

// Events are the seams, in the order a turn meets them.
var Events = []Event{UserPromptSubmit, PreToolUse, PostToolUse, Stop}

// DefaultTimeout bounds a hook that names no timeout.
const DefaultTimeout = 60 * time.Second

// Hook is one configured command.
type Hook struct {
	Event Event
	// Matcher selects the tools of a tool event: a regular expression that
	// must match the whole tool name, case-insensitively ("bash",
	// "edit|write", "mcp__github__.*"); empty or "*" matches every tool.
	Matcher string
	Command string
	Timeout time.Duration // 0: DefaultTimeout
	// From says where the hook was configured ("user, ~/.config/…"), for
	// reports.
	From string

	re *regexp.Regexp
}

// New checks a hook and compiles its matcher.
func New(ev Event, matcher, command string, timeout time.Duration, from string) (Hook, error) {
	h := Hook{Event: ev, Matcher: strings.TrimSpace(matcher), Command: strings.TrimSpace(command), Timeout: timeout, From: from}
	switch ev {
	case PreToolUse, PostToolUse:
	case UserPromptSubmit, Stop:
		if h.Matcher != "" {
			return Hook{}, fmt.Errorf("a %s hook takes no matcher (it is not about a tool)", ev)
		}
	default:
		return Hook{}, fmt.Errorf("unknown hook event %q (PreToolUse, PostToolUse, UserPromptSubmit or Stop)", ev)
	}
	if h.Command == "" {
		return Hook{}, fmt.Errorf("a %s hook needs a command", ev)
	}
	if timeout < 0 {
		return Hook{}, fmt.Errorf("a hook's timeout must be positive, not %s", timeout)
	}
	if h.Matcher != "" && h.Matcher != "*" {
		re, err := regexp.Compile("^(?i:" + h.Matcher + ")$")
		if err != nil {
			return Hook{}, fmt.Errorf("matcher %q is not a regular expression: %v", h.Matcher, err)
		}
		h.re = re
	}
	return h, nil
}

// Matches reports whether the hook runs for a call of tool.
func (h *Hook) Matches(tool string) bool { return h.re == nil || h.re.MatchString(tool) }

// Name is how reports name the hook: its event and command, shortened.
func (h *Hook) Name() string {
	c := strings.Join(strings.Fields(h.Command), " ")
	if len(c) > 60 {
		c = c[:57] + "…"
	}
	return fmt.Sprintf("%s hook `%s`", h.Event, c)
}

func (h *Hook) timeout() time.Duration {
	if h.Timeout > 0 {
		return h.Timeout
	}
	return DefaultTimeout
}

// Set is the hooks in effect, in the order they run: the user's first,
// then the project's.
type Set []Hook

// For returns the hooks of ev that run for tool ("" for the events that
// are not about a tool).
func (s Set) For(ev Event, tool string) []Hook {
	var out []Hook
	for _, h := range s {
		if h.Event == ev && (tool == "" || h.Matches(tool)) {
			out = append(out, h)
		}
	}
	return out
}
