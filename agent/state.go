package agent

import (
	"slices"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/codemode"
	"github.com/acp-bridge/acp-bridge/compact"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/sandbox"
	"github.com/acp-bridge/acp-bridge/session"
)

// state is everything a session knows about itself, derived from its
// events and nothing else: apply is its only writer. A live session applies
// each event as it appends it; session/load and session/resume apply the
// stored events one by one, so a reloaded session is the one a
// never-restarted process would have (TestFoldEqualsLive).
type state struct {
	history []model.Message // what the next model request sends after the system prompt
	// histGen changes whenever history is replaced, cut or rewritten rather
	// than appended to (reset, compaction, prune, a refused turn): between
	// two changes history only grows, and request relies on it.
	histGen uint64
	ctl     ctlState
	grants  map[string]bool       // "always" answers by permission key: allowed or rejected
	open    openCalls             // tool calls without a result, in the order made (opencalls.go)
	client  *session.ClientPrompt // the client's system prompt, nil for none (sysprompt.go)
	turns   int                   // the last turn number
	inTurn  int                   // the turn started and not yet ended, 0 for none
	// turnFrom is where the running turn's prompt entered the history, -1
	// before it has: a refused turn is cut back to it (TurnEnd).
	turnFrom int

	// system is the fixed part of the system prompt once the session has
	// taken it (prompt.go); nil before.
	system *session.SystemPrompt
	// ctx is what the last usage said of the context's size (compaction.go).
	ctx         ctxSize
	compactions int // compactions started, for their ids

	// The context being built: the last prompt until it enters the
	// context, and the additional context of the results so far (the
	// calls still owed a result are open's step).
	prompt *model.Message // the last prompt as the model will read it (text, images)
	extra  []string
	// ids are every call id the log holds: the call recorder gives new
	// ones unique against them (calls.go).
	ids map[string]bool

	// prompts are the user's messages still in the conversation (not
	// rewound), oldest first, each with the context as it was when it
	// arrived: a rewind goes back to one of them (rewind.go).
	prompts []promptMark
	// cuts are the contexts after each event that changed the context,
	// oldest first: a rewind to a message goes back to one of them
	// (rewindstate.go).
	cuts []cutMark

	// offered reports whether a model id is one this agent offers; a
	// stored choice of a model no longer configured keeps the default.
	offered func(id string) bool
}

// ctlState is the session's selectable settings and what it has cost.
type ctlState struct {
	mode   string        // a permission mode
	model  string        // a ModelChoice ID; "" when the agent has no models
	tools  codemode.Mode // the tools mode
	effort string        // the reasoning effort chosen, "" for the model's default
	// sandbox is the sandbox mode of the session's commands, "" when the
	// agent has no sandbox (agent/sandbox.go).
	sandbox sandbox.Mode
	// manualCompact and hideThoughts are the auto_compact and
	// show_thoughts switches, off (both are on by default).
	manualCompact bool
	hideThoughts  bool
	title         string  // "" until the first exchange names the session
	cost          float64 // cumulative, when the model has prices
}

func newState(defaults ctlState, offered func(string) bool) *state {
	return &state{ctl: defaults, grants: map[string]bool{}, ids: map[string]bool{}, offered: offered, turnFrom: -1}
}

// apply folds one event into the state.
func (st *state) apply(ev session.Event) {
	before, gen := st.history, st.histGen
	st.fold(ev)
	st.markCut(ev, before, gen)
}

func (st *state) fold(ev session.Event) {
	switch p := ev.Payload.(type) {
	case session.UserMessage:
		st.prompt = &model.Message{Role: model.RoleUser, Content: p.Text, Images: promptImages(p)}
		st.prompts = append(st.prompts, promptMark{seq: ev.Seq, msg: p, history: st.history})
	case session.Rewind:
		st.rewind(p)
	case session.UserContext:
		// The prompt enters the model's context (session.go, run).
		msg := model.Message{Role: model.RoleUser}
		if st.prompt != nil {
			msg = *st.prompt
		}
		if st.inTurn != 0 && st.turnFrom < 0 {
			st.turnFrom = len(st.history)
		}
		if n := len(st.prompts); n > 0 {
			st.prompts[n-1].entered = true
		}
		st.history = append(st.history, msg)
		if len(p.Context) > 0 {
			st.history = append(st.history, model.Message{Role: model.RoleUser, Content: strings.Join(p.Context, "\n\n")})
		}
	case session.UserSteer:
		// A steered message joins the running turn's context at a request
		// boundary, after the results of the calls before it (steer.go).
		st.history = append(st.history, model.Message{Role: model.RoleUser, Content: p.Text, Images: promptImages(session.UserMessage(p))})
	case session.ContextReset:
		st.turnFrom = -1 // what the turn added is gone with the rest, or in the summary
		st.open.dropStep()
		st.extra = nil
		st.history = nil
		st.histGen++
		if p.Reason == "compact" {
			st.history = compactedContext(p.Summary)
		}
		st.ctx = ctxSize{}
	case session.SystemPrompt:
		if st.system == nil { // the first one holds for the session
			st.system = &p
		}
	case session.Compaction:
		st.applyCompaction(p)
		st.histGen++
	case session.Prune:
		st.history, _ = compact.Prune(st.history, p.Before, p.MaxChars)
		st.histGen++
		st.ctx = ctxSize{}
	case session.AssistantMessage:
		msg := model.Message{Role: model.RoleAssistant, Content: p.Text, Reasoning: p.Reasoning}
		st.extra = nil
		for _, c := range p.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
			st.ids[c.Card()] = true
		}
		st.open.respond(p.ToolCalls)
		st.history = append(st.history, msg)
	case session.ToolCall:
		p.Input = nil // the live decode is the translator's; the state is what the log folds to
		st.ids[p.CallID] = true
		st.open.carded(p)
	case session.ToolResult:
		c, _ := st.open.close(p.CallID)
		if !c.step {
			// Not a call the model made (a Code Mode sub-call), or answered
			// already. A sub-call's additional context (a PostToolUse hook's)
			// joins its step's, after the program's result; a subagent's
			// call is the subagent's (its model read the context).
			if c.call.Parent != "" && c.call.Agent == "" && st.open.inStep(c.call.Parent) {
				st.extra = append(st.extra, p.Result.Context...)
			}
			return
		}
		id := c.endpoint // the endpoint reads its own id back
		if id == "" {
			id = p.CallID
		}
		st.history = append(st.history, model.Message{Role: model.RoleTool, ToolCallID: id, Content: p.Result.Text()})
		st.extra = append(st.extra, p.Result.Context...)
		// Additional context from post-execute policy follows the last
		// result of the response, so every tool message stays next to the
		// call it answers.
		if st.open.stepDone() && len(st.extra) > 0 {
			st.history = append(st.history, model.Message{Role: model.RoleUser, Content: strings.Join(st.extra, "\n\n")})
			st.extra = nil
		}
	case session.TurnStart:
		st.turns = max(st.turns, p.Turn)
		st.inTurn = p.Turn
		st.turnFrom = -1
	case session.TurnEnd:
		// A turn the model refused leaves the context as it was before the
		// prompt: the editor drops the user's message from its thread (Zed
		// does on stopReason refusal), so the model must not see it either,
		// nor its own refusal. The TurnEnd's stop reason is the mark in the
		// log; the transcript keeps the turn.
		if p.StopReason == string(acp.StopRefusal) && st.turnFrom >= 0 && st.turnFrom <= len(st.history) {
			// Clipped: the next append copies, so the contexts the marks
			// keep of the refused turn are not written over.
			st.history = slices.Clip(st.history[:st.turnFrom])
			st.histGen++
			st.open.dropStep()
			st.extra = nil
		}
		st.inTurn, st.turnFrom = 0, -1
	case session.Controls:
		if ValidMode(p.Mode) {
			st.ctl.mode = p.Mode
		}
		if p.Model != "" && st.offered != nil && st.offered(p.Model) {
			st.ctl.model = p.Model
		}
		if p.Effort != "" {
			st.ctl.effort = p.Effort
		}
		if m, err := sandbox.ParseMode(p.Sandbox); err == nil && st.ctl.sandbox != "" {
			st.ctl.sandbox = m // only where the agent has a sandbox (the default set it)
		}
		if m, err := codemode.ParseMode(p.Tools); err == nil && p.Tools != "" {
			st.ctl.tools = m // a mode this build does not know keeps the one before
		}
		for _, sw := range p.Switches {
			switch sw.ID {
			case mapping.ConfigAutoCompact:
				st.ctl.manualCompact = !sw.On
			case mapping.ConfigShowThoughts:
				st.ctl.hideThoughts = !sw.On
			}
		}
	case session.Title:
		if p.Title != "" {
			st.ctl.title = p.Title
		}
	case session.Usage:
		if p.Currency != "" {
			st.ctl.cost = p.Cost
		}
		if p.Agent == "" {
			st.ctx = ctxSize{known: true, used: p.Used, size: p.Size, at: len(st.history)}
		}
	case session.Grant:
		if p.Key != "" {
			st.grants[p.Key] = p.Allowed
		}
	case session.ClientPrompt:
		st.client = &p
	}
}

// compactedContext is the context /compact leaves: the summary, and the
// model's acknowledgement.
func compactedContext(summary string) []model.Message { return compact.Replace(summary, nil) }

// assistantEvent is the log form of a complete model response; cards are
// its calls' card ids (nil: the endpoint's ids).
func assistantEvent(msg model.Message, cards []string) session.Event {
	m := session.AssistantMessage{Text: msg.Content, Reasoning: msg.Reasoning}
	for i, c := range msg.ToolCalls {
		mc := session.MessageCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		if i < len(cards) && cards[i] != c.ID {
			mc.CardID = cards[i]
		}
		m.ToolCalls = append(m.ToolCalls, mc)
	}
	return session.New(m)
}

// history is a copy of the model's context as it stands.
func (s *conversation) history() []model.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.history)
}
