package mapping

import (
	"fmt"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
)

// Message ids. Every user message, agent message and thought the editor is
// sent names its message (ContentChunk.messageId), so a client can point
// at one: a rewind (agent/rewind.go) names the user message to take back.
// An id is derived from the log position of the message's first event, so
// the same log gives the same ids live, on replay and in another process:
//
//   - a user message (a prompt, a steered message) is "user-<seq>" of its
//     event, or the id a v2 client was answered with (UserMessage.MessageID);
//   - an agent message is "agent-<seq>" of its first chunk, a thought
//     "thought-<seq>"; a message ends where a model response, a tool call,
//     a prompt or a turn's start or end comes between (boundary), and agent
//     text the agent itself says (a notice shown as text) joins the message
//     being streamed, or starts one.

// UserMessageID is the id of the user message logged at seq.
func UserMessageID(seq int64, p session.UserMessage) string {
	if p.MessageID != "" {
		return p.MessageID
	}
	return fmt.Sprintf("user-%d", seq)
}

// boundary ends the messages being streamed where p comes between two.
func (t *Translator) boundary(p session.Payload) {
	switch p.(type) {
	case session.UserMessage, session.TurnStart, session.TurnEnd, session.ToolCall, session.AssistantMessage, session.Rewind:
		t.text, t.thought = "", ""
	}
}

// withIDs gives the agent chunks of the event at seq their message's id.
func (t *Translator) withIDs(seq int64, ups []acp.Update) []acp.Update {
	for i, u := range ups {
		switch u := u.(type) {
		case acp.AgentMessageChunk:
			u.MessageID = streamedID(u.MessageID, &t.text, "agent", seq)
			ups[i] = u
		case acp.AgentThoughtChunk:
			u.MessageID = streamedID(u.MessageID, &t.thought, "thought", seq)
			ups[i] = u
		}
	}
	return ups
}

// streamedID is a chunk's message id: the one it has, else the id of the
// message being streamed (cur), which the first chunk of a message names
// by its kind and the seq of its event.
func streamedID(has string, cur *string, kind string, seq int64) string {
	if has != "" {
		return has
	}
	if *cur == "" {
		*cur = fmt.Sprintf("%s-%d", kind, seq)
	}
	return *cur
}
