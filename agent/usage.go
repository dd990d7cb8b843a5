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
func (s *conversation) recordUsage(ctx context.Context, u *model.Usage) {
	if u == nil {
		return
	}
	s.emit(ctx, session.New(s.usageEvent(u)))
}

// usageEvent is the usage event of a call that reported u (nil: none; the
// cost stays as it was).
func (s *conversation) usageEvent(u *model.Usage) session.Usage {
	if u == nil {
		s.mu.Lock()
		u = &model.Usage{ContextWindow: s.st.ctx.size} // the window the last call reported
		s.mu.Unlock()
	}
	m := s.currentModel()
	size := u.ContextWindow
	if m != nil && m.ContextWindow > 0 {
		size = m.ContextWindow
	}
	if size <= 0 {
		size = defaultContextWindow
	}
	s.mu.Lock()
	s.usage.add(u)
	s.mu.Unlock()
	ev := session.Usage{Used: u.InputTokens + u.OutputTokens, Size: size,
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, Estimated: u.Estimated}
	if m != nil && m.Price != nil {
		// The running total is in the event: applying it is what adds it.
		ev.Cost, ev.Currency = s.controls().cost+m.Price.cost(u), m.Price.Currency
		if ev.Currency == "" {
			ev.Currency = "USD"
		}
	}
	return ev
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

// takeTurnUsage returns the usage of the running turn (nil when the
// endpoint reported none) and starts the count again.
func (s *conversation) takeTurnUsage() *acp.Usage {
	s.mu.Lock()
	t := s.usage
	s.usage = turnUsage{}
	s.mu.Unlock()
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
//
// A prompt with nothing to name it by (only attachments) leaves the session
// untitled, and the next exchange tries again: whether the session has a
// title is all the log needs to say.
func (s *conversation) maybeTitle(ctx context.Context, prompt string) {
	if s.controls().title != "" {
		return
	}
	title := titleFrom(prompt)
	if title == "" {
		return
	}
	s.emit(ctx, session.New(session.Title{Title: title, UpdatedAt: s.a.o.Now().UTC().Format(time.RFC3339)}))
}

// Title returns the session's title, "" before the first exchange.
func (s *conversation) Title() string { return s.controls().title }

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
func (s *conversation) observePlan(_ *registry.Def, _ *registry.Call, r registry.Result) {
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
	s.emit(context.Background(), session.New(session.Plan{Entries: entries}))
}
