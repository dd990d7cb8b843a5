package agent

import (
	"context"

	"encoding/json"
	"github.com/acp-bridge/acp-bridge/acp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// recordUsage logs the context size after a model call (sent as
// usage_update) and adds the call's cost when the model has prices.
func (s *Session) recordUsage(ctx context.Context, u *model.Usage) {
	if u == nil {
		return
	}
	m := s.currentModel()
	size := u.ContextWindow
	if m != nil && m.ContextWindow > 0 {
		size = m.ContextWindow
	}
	if size <= 0 {
		size = defaultContextWindow
	}
	s.ctl.mu.Lock()
	s.ctl.turnUsage.add(u)
	s.ctl.mu.Unlock()
	ev := session.Usage{Used: u.InputTokens + u.OutputTokens, Size: size,
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, Estimated: u.Estimated}
	if m != nil && m.Price != nil {
		s.ctl.mu.Lock()
		s.ctl.cost += m.Price.cost(u)
		ev.Cost, ev.Currency = s.ctl.cost, m.Price.Currency
		s.ctl.mu.Unlock()
		if ev.Currency == "" {
			ev.Currency = "USD"
		}
	}
	s.emit(ctx, session.New(session.TypeUsage, ev))
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

// takeTurnUsage returns the usage of the turn that just ended (nil when the
// endpoint reported none) and starts the count again.
func (s *Session) takeTurnUsage() *acp.Usage {
	s.ctl.mu.Lock()
	t := s.ctl.turnUsage
	s.ctl.turnUsage = turnUsage{}
	s.ctl.mu.Unlock()
	if !t.reported {
		return nil
	}
	u := &acp.Usage{TotalTokens: t.input + t.output, InputTokens: t.input, OutputTokens: t.output}
	if t.cached > 0 {
		u.CachedReadTokens = &t.cached
	}
	return u
}

// cost of one call: cached input at its own price when one is set.
func (p *Price) cost(u *model.Usage) float64 {
	cached := min(u.CachedTokens, u.InputTokens)
	cachedPrice := p.CachedInput
	if cachedPrice == 0 {
		cachedPrice = p.Input
	}
	return (float64(u.InputTokens-cached)*p.Input + float64(cached)*cachedPrice + float64(u.OutputTokens)*p.Output) / 1e6
}

// maybeTitle names the session after its first exchange with the model,
// from the user's first words: asking the model would cost a request and
// make the title depend on an endpoint being up.
func (s *Session) maybeTitle(ctx context.Context, prompt string) {
	s.ctl.mu.Lock()
	if s.ctl.titleAsked {
		s.ctl.mu.Unlock()
		return
	}
	s.ctl.titleAsked = true
	s.ctl.mu.Unlock()
	title := titleFrom(prompt)
	if title == "" {
		return
	}
	s.ctl.mu.Lock()
	s.ctl.title = title
	s.ctl.mu.Unlock()
	s.emit(ctx, session.New(session.TypeTitle, session.Title{Title: title, UpdatedAt: s.a.o.Now().UTC().Format(time.RFC3339)}))
}

// Title returns the session's title, "" before the first exchange.
func (s *Session) Title() string {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	return s.ctl.title
}

const titleMax = 60

// titleFrom takes the first line of the prompt with text in it, collapses
// spaces and cuts it at a word boundary near titleMax runes.
func titleFrom(prompt string) string {
	var line string
	for l := range strings.Lines(prompt) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "<resource") && !strings.HasPrefix(l, "[resource") {
			line = l
			break
		}
	}
	line = strings.Join(strings.Fields(line), " ")
	if utf8.RuneCountInString(line) <= titleMax {
		return line
	}
	runes := []rune(line)[:titleMax]
	cut := len(runes)
	for i := len(runes) - 1; i > titleMax/2; i-- {
		if unicode.IsSpace(runes[i]) {
			cut = i
			break
		}
	}
	return strings.TrimRightFunc(string(runes[:cut]), func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }) + "…"
}

// observePlan turns a tool result that carries a plan into the session's
// plan (sent as a plan update). The convention: Result.Meta is an object
// with a "plan" array of {content, status, priority?}; tools/todo writes it.
func (s *Session) observePlan(_ *registry.Def, _ *registry.Call, r registry.Result) {
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
	s.emit(context.Background(), session.New(session.TypePlan, session.Plan{Entries: entries}))
}
