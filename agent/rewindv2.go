package agent

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
)

// Rewinding to any message the client saw (v2's session/rewind, a fork at
// a message): the log is kept up to and including the message named, as
// the v2 draft's session/rewind says ("toMessageId is kept; everything
// after it is discarded"), and what follows is taken back, the rest of its
// turn included (session.Rewind.After). The model's context becomes the one
// after the message: a user message with what its hooks added, a steered
// message, or an answer's text without the tool calls it made (their
// results are taken back); a thought, without the rest of its response.

var _ acp.HistoryRewinder = (*Agent)(nil)

// sentMessage is a message the editor was sent: its id and the log
// positions of the event that began it and of the last one that sent it.
type sentMessage struct {
	seq, end int64
	id       string
	user     *session.UserMessage // a user's message: what it said
}

func (m sentMessage) messageID() string                 { return m.id }
func (m sentMessage) userMessage() *session.UserMessage { return m.user }

// sentMessages are the messages of the conversation as a replay shows
// them (what was rewound is not among them), oldest first: the stored log
// through a fresh translator, so the ids are the ones the editor has.
func (r *rewinder) sentMessages(evs []session.Event) []sentMessage {
	void := hiddenOnReplay(evs, r.scope)
	tr := r.replaying()
	var out []sentMessage
	add := func(seq int64, id string, user *session.UserMessage) {
		switch n := len(out); {
		case id == "":
		case n > 0 && out[n-1].id == id:
			out[n-1].end = seq
		default:
			out = append(out, sentMessage{seq: seq, end: seq, id: id, user: user})
		}
	}
	for i, ev := range evs {
		ev = session.WithBlocks(ev)
		ups := tr.Translate(ev)
		if void[i] {
			continue
		}
		var user *session.UserMessage
		switch p := ev.Payload.(type) {
		case session.UserMessage:
			user = &p
		case session.UserSteer:
			m := session.UserMessage(p)
			user = &m
		}
		for _, u := range ups {
			switch u := u.(type) {
			case acp.UserMessageChunk:
				add(ev.Seq, u.MessageID, user)
			case acp.V2UserMessage:
				add(ev.Seq, u.MessageID, user)
			case acp.AgentMessageChunk:
				add(ev.Seq, u.MessageID, nil)
			case acp.AgentThoughtChunk:
				add(ev.Seq, u.MessageID, nil)
			}
		}
	}
	return out
}

// unknownMessage is the draft's error for an id the agent never sent.
func unknownMessage(id string) error {
	return &acp.Error{Code: acp.CodeResourceNotFound, Message: fmt.Sprintf("message %q is not one of this session's messages", id),
		Data: map[string]string{"reason": "unknown_message_id", "messageId": id}}
}

// cutAfter is where the log evs is cut to keep the message p names: the
// seq of the message's last event (its own, or the one that took it into
// the model's context: messageEnd), 0 when nothing after it is to be taken
// back; and the id of the message. A point is found as a rewind before a
// prompt finds one (pointAt), among all the messages sent.
func (r *rewinder) cutAfter(evs []session.Event, p *acp.HistoryPoint) (after int64, id string, err error) {
	msgs := r.sentMessages(evs)
	at := pointAt(msgs, p, sentMessage.messageID, sentMessage.userMessage)
	if at < 0 {
		return 0, "", unknownMessage(p.MessageID)
	}
	m := msgs[at]
	i := messageEnd(evs, m)
	if !slices.ContainsFunc(evs[i+1:], func(ev session.Event) bool { return rewound(ev.Payload) }) {
		return 0, m.id, nil // nothing after it the editor or the model would lose
	}
	return evs[i].Seq, m.id, nil
}

// messageEnd is the index in evs of a message's last event: the last that
// sent it, or the event after it that took it into the model's context, a
// prompt's user/context (what the hooks added joins it) or an answer's
// assistant/message, when that comes before anything else of the turn.
func messageEnd(evs []session.Event, m sentMessage) int {
	i, _ := slices.BinarySearchFunc(evs, m.end, func(ev session.Event, seq int64) int { return cmp.Compare(ev.Seq, seq) })
	if _, steer := evs[i].Payload.(session.UserSteer); steer {
		return i // it entered the context as it was logged
	}
	for j := i + 1; j < len(evs); j++ {
		switch evs[j].Payload.(type) {
		case session.UserContext:
			if m.user != nil {
				return j
			}
			return i
		case session.AssistantMessage:
			if m.user == nil {
				return j
			}
			return i
		case session.AssistantChunk, session.ToolCall, session.TurnEnd, session.UserMessage, session.UserSteer:
			return i // a notice (the turn's start may say one) is not of the turn's messages
		}
	}
	return i
}

// takeTurn holds the session's turn for a rewind, cancelling the running
// turn and the prompts queued behind it first (the v2 draft's contract).
func (s *conversation) takeTurn(ctx context.Context) error {
	for !s.holdTurn() {
		s.stopTurn(context.Canceled)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// RewindTo serves v2's session/rewind: the history keeps the message
// named and what came before it; the client is told with
// history_truncated (mappingv2), sent before the answer, which names the
// message.
func (a *Agent) RewindTo(ctx context.Context, req *acp.V2RewindRequest) (*acp.V2RewindResponse, error) {
	s, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	if err := s.takeTurn(ctx); err != nil {
		return nil, err
	}
	defer s.releaseTurn()
	after, last, err := s.rw.cutAfter(s.rw.events(), &acp.HistoryPoint{MessageID: req.ToMessageID})
	if err != nil {
		return nil, err
	}
	if after > 0 {
		s.rw.rewindTo(ctx, session.Rewind{After: after, Via: acp.MethodSessionRewindV2})
	}
	return &acp.V2RewindResponse{LastMessageID: last}, nil
}

// RewindBefore is v2's session/edit_prompt before its prompt: the user
// message named (a prompt, or a message steered into a turn) and what
// followed leave the conversation.
func (a *Agent) RewindBefore(ctx context.Context, sessionID, messageID string) error {
	s, err := a.session(sessionID)
	if err != nil {
		return err
	}
	if err := s.takeTurn(ctx); err != nil {
		return err
	}
	defer s.releaseTurn()
	msgs := s.rw.sentMessages(s.rw.events())
	i := idAt(msgs, messageID, sentMessage.messageID)
	switch {
	case i < 0:
		return unknownMessage(messageID)
	case msgs[i].user == nil:
		return &acp.Error{Code: acp.CodeInvalidParams, Message: fmt.Sprintf("invalid params: message %q is not a user message", messageID),
			Data: map[string]string{"reason": "not_a_user_message", "messageId": messageID}}
	}
	s.rw.rewindTo(ctx, session.Rewind{Before: msgs[i].seq, Via: acp.MethodSessionEditPrompt})
	return nil
}
