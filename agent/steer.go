package agent

import (
	"context"
	"encoding/json"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
)

// steering holds the messages the user sent during a running turn
// (`_session/steering`) until the turn's next model request takes them. It
// is open from the moment the turn's prompt enters the model's context
// until the turn decides to end; a message offered outside that window is
// refused, so one that was accepted always reaches the model or, when the
// turn is cancelled first, the log (nothing accepted is lost).
//
// This is apart from a prompt sent while a turn runs: that is a new turn
// of its own, while a steered message joins the running one, whose
// session/prompt stays open and ends with one stop reason.
//
// It is part of who holds the turn (turnSlot): the conversation's mu
// guards it, held by every caller of its methods.
type steering struct {
	open  bool
	queue []session.UserSteer
}

// begin opens the running turn to steered messages.
func (st *steering) begin() {
	st.open, st.queue = true, nil
}

// offer queues m for the running turn; false when no turn takes it.
func (st *steering) offer(m session.UserSteer) bool {
	if !st.open {
		return false
	}
	st.queue = append(st.queue, m)
	return true
}

// take returns the messages queued since the last take.
func (st *steering) take() []session.UserSteer {
	q := st.queue
	st.queue = nil
	return q
}

// more is asked when the model has answered without calling a tool: with
// messages waiting the turn goes on for them (true); without, it closes in
// the same step, so no message slips in between the check and the end.
func (st *steering) more() bool {
	if len(st.queue) > 0 {
		return true
	}
	st.open = false
	return false
}

// end closes the turn to steered messages and returns those that never
// reached a model request (the turn was cancelled, failed or ran out of
// requests first).
func (st *steering) end() []session.UserSteer {
	q := st.queue
	st.open, st.queue = false, nil
	return q
}

// joinSteered logs the messages steered since the last model request: each
// enters the context (state.apply) after the results before it.
func (s *conversation) joinSteered(ctx context.Context, msgs []session.UserSteer) {
	for _, m := range msgs {
		s.emit(ctx, session.New(m))
	}
}

// Steer serves `_session/steering`: with a turn running, the message joins
// it at its next model request (outcome injected); with none, the answer is
// the one claude-agent-acp and codex-acp give, promptRequired with reason
// noRunningTurn, and the client sends it as a prompt. Nothing is logged
// then: the message is the client's still.
func (a *Agent) Steer(ctx context.Context, req *acp.SteeringRequest) (*acp.SteeringResponse, error) {
	s, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	if len(req.Prompt) == 0 {
		return nil, acp.InvalidParams("invalid params: prompt is empty")
	}
	m := s.ctl.model()
	text, images, dropped, err := promptContent(m, req.Prompt)
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(req.Prompt)
	s.mu.Lock()
	ok := s.steer.offer(session.UserSteer{Prompt: raw, Text: text, Images: images, Blocks: req.Prompt})
	s.mu.Unlock()
	if !ok {
		return &acp.SteeringResponse{Outcome: acp.SteeringPromptRequired, Reason: acp.SteeringNoRunningTurn}, nil
	}
	a.log.Info("steered message queued for the running turn", "session", s.id)
	if dropped > 0 {
		s.notice(ctx, droppedImagesNotice(m, dropped))
	}
	return &acp.SteeringResponse{Outcome: acp.SteeringInjected}, nil
}

var _ acp.SessionSteerer = (*Agent)(nil)
