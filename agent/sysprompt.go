package agent

import (
	"context"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/sysprompt"
)

// The client's system prompt (systemPrompt on new, load, resume and fork,
// advertised with sessionCapabilities.systemPrompt and mode.override).

// parseSystemPrompt checks a client system prompt. The schema asks an agent
// to refuse what it cannot apply rather than guess: an unknown mode, an
// empty array, a block that is not text. nil stays nil (no client prompt).
func parseSystemPrompt(sp *acp.SystemPrompt) (*session.ClientPrompt, error) {
	if sp == nil {
		return nil, nil
	}
	switch sp.Mode {
	case acp.SystemPromptAppend, acp.SystemPromptOverride:
	default:
		return nil, acp.InvalidParams("invalid params: systemPrompt.mode %q is not supported (append or override)", sp.Mode)
	}
	if len(sp.Content) == 0 {
		return nil, acp.InvalidParams("invalid params: systemPrompt.content is empty")
	}
	var parts []string
	for i, b := range sp.Content {
		if b.Type != "text" {
			return nil, acp.InvalidParams("invalid params: systemPrompt.content[%d] is %q; only text blocks are supported", i, b.Type)
		}
		parts = append(parts, b.Text)
	}
	return &session.ClientPrompt{Mode: sp.Mode, Text: strings.Join(parts, "\n\n")}, nil
}

// ComposeSystemPrompt is the model's system prompt. fixed is the agent's
// own fixed part (instructions, AGENTS.md files, environment), env the
// environment block alone, tail the mode lines. A client prompt in append
// mode follows the fixed part; in override mode it takes the place of the
// agent's instructions and the environment stays (the schema lets an agent
// keep what it supplies from the workspace). The mode lines come last in
// every case, so a mode change is the only thing that moves.
func ComposeSystemPrompt(fixed, env string, client *session.ClientPrompt, tail ...string) string {
	switch {
	case client == nil || strings.TrimSpace(client.Text) == "":
		return sysprompt.Join(append([]string{fixed}, tail...)...)
	case client.Mode == acp.SystemPromptOverride:
		return sysprompt.Join(append([]string{client.Text, env}, tail...)...)
	}
	return sysprompt.Join(append([]string{fixed, client.Text}, tail...)...)
}

// setClient makes cp the session's client prompt and logs it, so a load
// or fork of the session gives the model the same instructions. A request
// without one leaves the session's as it was.
func (p *prompts) setClient(cp *session.ClientPrompt) {
	if cp == nil {
		return
	}
	if _, cur := p.folded(); cur != nil && *cur == *cp {
		return // the log has it already
	}
	p.emit(context.Background(), session.New(*cp)) // apply makes it the session's
}
