package agent

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/model/catalog"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// meter is one session's usage accounting: the usage event of every model
// call (the context's size and the running cost, sent as usage_update) and
// the running turn's tokens, for PromptResponse.usage. It changes when
// what is reported about usage changes, and nothing else does.
type meter struct {
	ctl  *controls
	emit func(ctx context.Context, ev session.Event)
	// window is the context window the last call reported (folded state).
	window func() int
	// context is the session's context as the last usage said (folded
	// state): a subagent's usage event repeats it.
	context func() (used, size int)

	// costMu makes reading the running cost and logging the new one a
	// single step: subagents running at the same time report usage at the
	// same time, and each must add to the other's total. It is taken
	// before the emit lock (the session's lock order).
	costMu sync.Mutex
	mu     sync.Mutex // guards turn; taken alone
	turn   turnUsage
}

// record logs the usage of a model call that reported u.
func (m *meter) record(ctx context.Context, u *model.Usage) {
	if u == nil {
		return
	}
	m.costMu.Lock()
	defer m.costMu.Unlock()
	m.emit(ctx, session.New(m.event(u)))
}

// subagent logs the usage of a model call of the subagent agent, which ran
// on choice: its tokens count in the running turn and its cost, at
// choice's price, in the session's; the session's context is unchanged.
func (m *meter) subagent(ctx context.Context, u *model.Usage, choice *ModelChoice, agent string) {
	if u == nil {
		return
	}
	m.mu.Lock()
	m.turn.add(u)
	m.mu.Unlock()
	m.costMu.Lock()
	defer m.costMu.Unlock()
	used, size := m.context()
	ev := session.Usage{Used: used, Size: size, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, Estimated: u.Estimated, Agent: agent}
	if choice != nil && choice.Price != nil {
		ev.Cost, ev.Currency = m.ctl.read().cost+choice.Price.Cost(u), choice.Price.CurrencyOf()
	}
	m.emit(ctx, session.New(ev))
}

// event is the usage event of a call that reported u (nil: none; the cost
// stays as it was), counted into the running turn.
func (m *meter) event(u *model.Usage) session.Usage {
	if u == nil {
		u = &model.Usage{ContextWindow: m.window()}
	}
	choice := m.ctl.model()
	size := catalog.Window(choice, u.ContextWindow)
	m.mu.Lock()
	m.turn.add(u)
	m.mu.Unlock()
	ev := session.Usage{Used: u.InputTokens + u.OutputTokens, Size: size,
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, Estimated: u.Estimated}
	if choice != nil && choice.Price != nil {
		// The running total is in the event: applying it is what adds it.
		ev.Cost, ev.Currency = m.ctl.read().cost+choice.Price.Cost(u), choice.Price.CurrencyOf()
	}
	return ev
}

// startTurn begins the count of a new turn.
func (m *meter) startTurn() {
	m.mu.Lock()
	m.turn = turnUsage{}
	m.mu.Unlock()
}

// takeTurn returns the usage of the running turn (nil when the endpoint
// reported none) and starts the count again.
func (m *meter) takeTurn() *acp.Usage {
	m.mu.Lock()
	t := m.turn
	m.turn = turnUsage{}
	m.mu.Unlock()
	if !t.reported {
		return nil
	}
	u := &acp.Usage{TotalTokens: t.input + t.output, InputTokens: t.input, OutputTokens: t.output}
	if t.cached > 0 {
		u.CachedReadTokens = &t.cached
	}
	return u
}

// turnUsage sums the tokens of one turn's model requests for
// PromptResponse.usage. Estimates are not reports: a turn whose endpoint
// reported nothing has no usage to give.
type turnUsage struct {
	reported              bool
	input, output, cached uint64
}

func (t *turnUsage) add(u *model.Usage) {
	if u.Estimated {
		return
	}
	t.reported = true
	t.input += uint64(max(u.InputTokens, 0))
	t.output += uint64(max(u.OutputTokens, 0))
	t.cached += uint64(max(u.CachedTokens, 0))
}

// titleEvent names the session after its first exchange with the model,
// from the user's first words (asking the model would cost a request and
// make the title depend on an endpoint being up); ok is false when the
// session has a title already. A prompt with nothing to name it by (only
// attachments) leaves the session untitled, and the next exchange tries
// again: whether the session has a title is all the log needs to say.
func titleEvent(current, prompt string, now time.Time) (ev session.Title, ok bool) {
	if current != "" {
		return ev, false
	}
	title := session.TitleFrom(prompt)
	if title == "" {
		return ev, false
	}
	return session.Title{Title: title, UpdatedAt: now.UTC().Format(time.RFC3339)}, true
}

// planObserver turns a tool result that carries a plan into the session's
// plan (sent as a plan update). The convention: Result.Meta is an object
// with a "plan" array of {content, status, priority?}; tools/todo writes it.
func planObserver(emit func(ctx context.Context, ev session.Event)) pipeline.Observer {
	return func(_ *registry.Def, _ *registry.Call, r registry.Result) {
		if r.IsError || len(r.Meta) == 0 {
			return
		}
		var m struct {
			Plan *[]session.PlanEntry `json:"plan"`
		}
		if json.Unmarshal(r.Meta, &m) != nil || m.Plan == nil {
			return
		}
		entries := *m.Plan
		if entries == nil {
			entries = []session.PlanEntry{}
		}
		emit(context.Background(), session.New(session.Plan{Entries: entries}))
	}
}
