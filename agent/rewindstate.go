package agent

import (
	"cmp"
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

// cutMark is the model's context as it stood after the event at seq, one
// for each event that changed it, for a rewind that keeps the log up to a
// message (session.Rewind.After) or takes back a steered message: history
// is the state's slice then (never changed in place, as promptMark's). A
// response that made tool calls is kept without them (their results are
// taken back with what follows): history is then the context before it,
// and reply the response without its calls, appended when the cut is made.
type cutMark struct {
	seq     int64
	history []model.Message
	reply   *model.Message
}

// context is the context the mark keeps, in a slice of its own capacity
// (the next append copies, so no mark's view is written over).
func (m cutMark) context() []model.Message {
	h := slices.Clip(m.history)
	if m.reply != nil {
		h = append(h, *m.reply)
	}
	return h
}

// markCut records the context after ev when applying it changed the
// history (before and gen are the history and its generation before).
func (st *state) markCut(ev session.Event, before []model.Message, gen uint64) {
	if gen == st.histGen && len(before) == len(st.history) && (len(before) == 0 || &before[0] == &st.history[0]) {
		return // unchanged
	}
	m := cutMark{seq: ev.Seq, history: st.history}
	if p, ok := ev.Payload.(session.AssistantMessage); ok && len(p.ToolCalls) > 0 && gen == st.histGen {
		m.history, m.reply = before, &model.Message{Role: model.RoleAssistant, Content: p.Text, Reasoning: p.Reasoning}
	}
	st.cuts = append(st.cuts, m)
}

// contextAfter is the context as it stood after the event at seq: the last
// mark at or before it (none: empty).
func (st *state) contextAfter(seq int64) []model.Message {
	i, _ := slices.BinarySearchFunc(st.cuts, seq+1, func(m cutMark, seq int64) int { return cmp.Compare(m.seq, seq) })
	if i == 0 {
		return nil
	}
	return st.cuts[i-1].context()
}

// rewind folds a Rewind: the context becomes what it was when the user
// message at p.Before arrived (or, for p.After, after the event at
// p.After), and the messages after that point up to p.Until leave the
// conversation. What the log says besides the conversation (controls,
// cost, grants, title, the turn count, the call ids used) stays.
func (st *state) rewind(p session.Rewind) {
	var from int64 // the first event taken back
	switch i := slices.IndexFunc(st.prompts, func(m promptMark) bool { return m.seq == p.Before }); {
	case p.After > 0:
		from = p.After + 1
		st.history = st.contextAfter(p.After)
	case i >= 0:
		from = p.Before
		// Clipped: the next append copies, so no mark's view is written over.
		st.history = slices.Clip(st.prompts[i].history)
	case p.Before > 0 && slices.ContainsFunc(st.cuts, func(m cutMark) bool { return m.seq == p.Before }):
		// A steered message (it entered the context as it was logged).
		from = p.Before
		st.history = st.contextAfter(p.Before - 1)
	default:
		return // names no message of the conversation: the agent never logs one (rewind.go)
	}
	st.histGen++
	st.prompt, st.extra = nil, nil
	st.open.dropStep()
	st.turnFrom = -1
	st.ctx = ctxSize{}
	taken := func(seq int64) bool { return seq >= from && (p.Until == 0 || seq < p.Until) }
	var kept []promptMark
	for _, m := range st.prompts {
		if taken(m.seq) {
			continue
		}
		if m.seq >= from {
			// Logged before the rewind but after what it took back (the
			// slash command that asked): it stays, in the context as it is now.
			m.history = st.history
		}
		kept = append(kept, m)
	}
	st.prompts = kept
	st.cuts = slices.DeleteFunc(st.cuts, func(m cutMark) bool { return m.seq >= from })
}
