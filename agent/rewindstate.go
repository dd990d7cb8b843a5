package agent

import (
	"slices"

	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/session"
)

// promptMark is one user message of the conversation, as the fold keeps it
// for a rewind: where it is in the log, what it said, and the model's
// context just before it. history is the state's own slice as it was then:
// the history is never changed in place (reqCache relies on it too), and a
// replacement (compaction, reset) makes a new one, so the marks keep the
// contexts they saw.
type promptMark struct {
	seq     int64
	msg     session.UserMessage
	history []model.Message
	// entered: the message entered the model's context (user/context);
	// a slash command's did not.
	entered bool
}

// rewind folds a Rewind: the context becomes what it was when the user
// message at p.Before arrived, and that message and the ones after it up
// to p.Until leave the conversation. What the log says besides the
// conversation (controls, cost, grants, title, the turn count, the call
// ids used) stays.
func (st *state) rewind(p session.Rewind) {
	i := slices.IndexFunc(st.prompts, func(m promptMark) bool { return m.seq == p.Before })
	if i < 0 {
		return // not a message of the conversation: the agent never logs one (rewind.go)
	}
	// Clipped: the next append copies, so no mark's view is written over.
	st.history = slices.Clip(st.prompts[i].history)
	st.histGen++
	st.prompt, st.extra = nil, nil
	st.open.dropStep()
	st.turnFrom = -1
	st.ctx = ctxSize{}
	kept := st.prompts[:i]
	for _, m := range st.prompts[i+1:] {
		if p.Until > 0 && m.seq >= p.Until {
			// Logged before the rewind but after what it took back (the
			// slash command that asked): it stays, in the context as it is now.
			m.history = st.history
			kept = append(kept, m)
		}
	}
	st.prompts = kept
}
