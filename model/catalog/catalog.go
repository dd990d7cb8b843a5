// Package catalog is the models a user may pick and what they cost: each
// choice's provider, context window, image input, reasoning efforts and
// price, and the cost of one call. It changes when the offer of models or
// their prices change; sessions only read it.
package catalog

import (
	"slices"

	"github.com/acp-bridge/acp-bridge/model"
)

// Choice is one model the user may pick for a session.
type Choice struct {
	ID          string // unique, e.g. "deepseek/deepseek-chat"
	Name        string // shown in the picker
	Description string
	Provider    model.Provider
	// ContextWindow is the usage_update size, in tokens (0: unknown,
	// DefaultContextWindow assumed).
	ContextWindow int
	Images        bool   // the model accepts image input
	Price         *Price // nil: no cost is reported
	// ReasoningEfforts are the reasoning_effort values the model takes,
	// offered as the thought_level config option; empty: it takes none.
	ReasoningEfforts []string
}

// Price is what a model costs, per million tokens.
type Price struct {
	Input       float64 // uncached input
	CachedInput float64 // input served from the prompt cache (0: same as Input)
	Output      float64
	Currency    string // e.g. "USD"; "" is USD
}

// DefaultContextWindow is the window assumed when neither the choice nor
// the endpoint says.
const DefaultContextWindow = 128000

// Cost of one call that reported u: cached input at its own price when one
// is set.
func (p *Price) Cost(u *model.Usage) float64 {
	cached := min(u.CachedTokens, u.InputTokens)
	cachedPrice := p.CachedInput
	if cachedPrice == 0 {
		cachedPrice = p.Input
	}
	return (float64(u.InputTokens-cached)*p.Input + float64(cached)*cachedPrice + float64(u.OutputTokens)*p.Output) / 1e6
}

// CurrencyOf is the price's currency, USD when unset.
func (p *Price) CurrencyOf() string {
	if p.Currency == "" {
		return "USD"
	}
	return p.Currency
}

// Window is the context window of c (nil: no choice) given what the
// endpoint reported: the configured one wins, then the reported one, then
// DefaultContextWindow.
func Window(c *Choice, reported int) int {
	size := reported
	if c != nil && c.ContextWindow > 0 {
		size = c.ContextWindow
	}
	if size <= 0 {
		size = DefaultContextWindow
	}
	return size
}

// Catalog is one agent's offer: a fixed list with more found later (a
// provider's model list), or one lone model.
type Catalog struct {
	Fixed []Choice
	// More, when set, finds more choices at each look (cached by the caller's
	// function); they follow the fixed ones.
	More func() []Choice
	// Lone is a single model offered when Fixed is empty, named LoneName
	// ("default" when empty).
	Lone     model.Provider
	LoneName string
}

// Models returns the choices, in the order the picker offers them.
func (c Catalog) Models() []Choice {
	if len(c.Fixed) > 0 {
		if c.More != nil {
			if more := c.More(); len(more) > 0 {
				return append(slices.Clip(c.Fixed), more...)
			}
		}
		return c.Fixed
	}
	if c.Lone != nil {
		name := c.LoneName
		if name == "" {
			name = "default"
		}
		return []Choice{{ID: name, Name: name, Provider: c.Lone}}
	}
	return nil
}

// Find returns the choice with id, or nil.
func (c Catalog) Find(id string) *Choice {
	ms := c.Models()
	for i := range ms {
		if ms[i].ID == id {
			return &ms[i]
		}
	}
	return nil
}

// AnyImages reports whether any choice accepts images: the capability is
// advertised once, while the model is each session's choice.
func (c Catalog) AnyImages() bool {
	return slices.ContainsFunc(c.Models(), func(m Choice) bool { return m.Images })
}

// Default is the model a new session starts with: want when offered, else
// the first choice, "" when there is none.
func (c Catalog) Default(want string) string {
	ms := c.Models()
	if len(ms) == 0 {
		return ""
	}
	if c.Find(want) != nil {
		return want
	}
	return ms[0].ID
}
