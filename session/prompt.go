package session

import (
	"encoding/json"

	"github.com/acp-bridge/acp-bridge/acp"
)

// PromptBlocks are the prompt's content blocks: Blocks when the event has
// them, else Prompt decoded (an event made without them); ok is false for
// a Prompt that is not a list of blocks.
func (m UserMessage) PromptBlocks() (blocks []acp.ContentBlock, ok bool) {
	if m.Blocks != nil {
		return m.Blocks, true
	}
	if json.Unmarshal(m.Prompt, &blocks) != nil {
		return nil, false
	}
	return blocks, true
}

// WithBlocks is ev with its prompt's blocks decoded (a UserMessage's or a
// UserSteer's, when it has none yet): the stored log's loop does it once per
// event, before the fold and the translator read them. Other events, and a
// Prompt that does not decode, are returned as they are.
func WithBlocks(ev Event) Event {
	switch p := ev.Payload.(type) {
	case UserMessage:
		if b, ok := p.PromptBlocks(); ok && p.Blocks == nil {
			p.Blocks = b
			ev.Payload = p
		}
	case UserSteer:
		if b, ok := UserMessage(p).PromptBlocks(); ok && p.Blocks == nil {
			p.Blocks = b
			ev.Payload = p
		}
	}
	return ev
}
