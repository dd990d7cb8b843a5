// Package sysprompt composes what the model is told before the conversation:
// the system prompt kept as text in this package, the project's AGENTS.md
// instructions and an environment block. Everything here is fixed when a
// session starts, so the system message stays byte-identical from one
// request to the next and the endpoint's prefix cache keeps hitting; only
// the mode lines that follow it change, and only when the user changes mode.
package sysprompt

import (
	_ "embed"
	"strings"
)

//go:embed system.md
var system string

// System returns the built-in system prompt text.
func System() string { return strings.TrimSpace(system) }

// PlanMode is the line added while the session is in plan mode.
const PlanMode = "The session is in plan mode: only read-only tools run. Investigate, then lay out the plan with todo_write; do not try to change files or run commands."

// Parts are the pieces of the fixed part of a system prompt.
type Parts struct {
	// Base replaces the built-in text when set (a client's override).
	Base string
	// Instructions are the AGENTS.md files in effect, farthest first.
	Instructions []Instruction
	Env          Env
}

// Fixed returns the part of the system prompt that holds for the whole
// session: the base text, the project instructions, then the environment.
// The same parts give the same bytes.
func Fixed(p Parts) string {
	base := strings.TrimSpace(p.Base)
	if base == "" {
		base = System()
	}
	return Join(base, renderInstructions(p.Instructions), p.Env.Render())
}

// Join puts the non-empty sections together, a blank line between them.
// The agent adds its mode lines to the fixed part with it.
func Join(sections ...string) string {
	var b strings.Builder
	for _, s := range sections {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(s)
	}
	return b.String()
}
