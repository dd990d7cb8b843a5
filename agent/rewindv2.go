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
// a message): the conversation keeps the turn that holds the message whole
// and goes back to before the next user message, the one granularity the
// context has (a turn's answer is not split).

var _ acp.HistoryRewinder = (*Agent)(nil)

// sentMessage is a message the editor was sent: its id and the log
// position of the event that began it.
type sentMessage struct {
	seq  int64
	id   string
	user *session.UserMessage // a user's message: what it said
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
		if n := len(out); id != "" && (n == 0 || out[n-1].id != id) {
			out = append(out, sentMessage{seq, id, user})
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

// cutAfter is where the log evs is cut to keep the message p names and
// the rest of its turn: the seq of the next prompt (0: none, nothing to
// cut), and the id of the last message kept. A point is found as a rewind
// before a prompt finds one (pointAt), among all the messages sent.
func (r *rewinder) cutAfter(evs []session.Event, p *acp.HistoryPoint) (before int64, last string, err error) {
	msgs := r.sentMessages(evs)
	at := pointAt(msgs, p, sentMessage.messageID, sentMessage.userMessage)
	if at < 0 {
		return 0, "", unknownMessage(p.MessageID)
	}
	last = msgs[at].id
	for _, m := range msgs[at+1:] {
		if m.user != nil && prompted(evs, m.seq) {
			return m.seq, last, nil
		}
		last = m.id
	}
	return 0, last, nil
}

// prompted reports whether the event at seq is a prompt (a user/message; a
// steered message joined its turn, which goes whole).
func prompted(evs []session.Event, seq int64) bool {
	i, ok := slices.BinarySearchFunc(evs, seq, func(ev session.Event, seq int64) int { return cmp.Compare(ev.Seq, seq) })
	if !ok {
		return false
	}
	_, user := evs[i].Payload.(session.UserMessage)
	return user
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
// named and the rest of its turn; the client is told with
// history_truncated (mappingv2), sent before the answer.
func (a *Agent) RewindTo(ctx context.Context, req *acp.V2RewindRequest) (*acp.V2RewindResponse, error) {
	s, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	if err := s.takeTurn(ctx); err != nil {
		return nil, err
	}
	defer s.releaseTurn()
	before, last, err := s.rw.cutAfter(s.rw.events(), &acp.HistoryPoint{MessageID: req.ToMessageID})
	if err != nil {
		return nil, err
	}
	if before > 0 {
		s.rw.rewindTo(ctx, before, 0, acp.MethodSessionRewindV2)
	}
	return &acp.V2RewindResponse{LastMessageID: last}, nil
}

// RewindBefore is v2's session/edit_prompt before its prompt: the user
// message named and what followed leave the conversation.
func (a *Agent) RewindBefore(ctx context.Context, sessionID, messageID string) error {
	s, err := a.session(sessionID)
	if err != nil {
		return err
	}
	if err := s.takeTurn(ctx); err != nil {
		return err
	}
	defer s.releaseTurn()
	m, ok := markByID(s.rw.marks(), messageID)
	if !ok {
		if _, _, err := s.rw.cutAfter(s.rw.events(), &acp.HistoryPoint{MessageID: messageID}); err == nil { // a message, not a prompt
			return &acp.Error{Code: acp.CodeInvalidParams, Message: fmt.Sprintf("invalid params: message %q is not a user message", messageID),
				Data: map[string]string{"reason": "not_a_user_message", "messageId": messageID}}
		}
		return unknownMessage(messageID)
	}
	s.rw.rewindTo(ctx, m.seq, 0, acp.MethodSessionEditPrompt)
	return nil
}
