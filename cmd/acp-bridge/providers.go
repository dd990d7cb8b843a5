package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/agent"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/model/route"
)

// listRouteTimeout bounds how long providers/set waits for the new
// endpoint's model list before it answers.
const listRouteTimeout = 5 * time.Second

// newRoutes is the table of the catalog's providers, which an editor may
// route elsewhere with providers/set (ACP, unstable): the provider of the
// default model is required (new sessions start on it). What the editor
// sets lives in this process only (model/route).
func newRoutes(provs []providerConfig, def string) *route.Table {
	t := route.New(func(ctx context.Context, r route.Route) ([]string, error) {
		ctx, cancel := context.WithTimeout(ctx, listRouteTimeout)
		defer cancel()
		return model.ListModelsWith(ctx, r.BaseURL, r.Headers, nil)
	})
	defProvider, _, _ := strings.Cut(def, "/")
	for _, p := range provs {
		t.Add(p.Name, p.BaseURL, p.Name == defProvider)
	}
	return t
}

// moreModels is what the picker offers beyond the configured models: the
// --base-url endpoint's list (discoverModels), then the models each
// editor-set route listed, as models of that provider.
func (c *config) moreModels(known []agent.ModelChoice, def string, logger *slog.Logger) func() []agent.ModelChoice {
	discovered := c.discoverModels(known, logger)
	if c.routes == nil {
		return discovered
	}
	var (
		mu     sync.Mutex
		gen    uint64
		cached []agent.ModelChoice
		built  bool
	)
	// The choices are made once per change of the table, not at each look.
	routed := func() []agent.ModelChoice {
		listed, g := c.routes.Listed()
		mu.Lock()
		defer mu.Unlock()
		if built && g == gen {
			return cached
		}
		cached, gen, built = nil, g, true
		urls := map[string]string{}
		for _, in := range c.routes.List() {
			urls[in.ID] = in.BaseURL
		}
		for _, p := range c.resolved {
			for _, n := range listed[p.Name] {
				ch, err := c.choice(p, modelConfig{Name: n}, def)
				if err != nil || len(cached) == maxDiscovered {
					continue
				}
				ch.Description = p.Name + " at " + urls[p.Name] + " (set by the editor)"
				cached = append(cached, ch)
			}
		}
		return cached
	}
	return func() []agent.ModelChoice {
		var more []agent.ModelChoice
		if discovered != nil {
			more = slices.Clip(discovered())
		}
		have := func(id string) bool {
			return slices.ContainsFunc(known, func(m agent.ModelChoice) bool { return m.ID == id }) ||
				slices.ContainsFunc(more, func(m agent.ModelChoice) bool { return m.ID == id })
		}
		for _, ch := range routed() {
			if !have(ch.ID) {
				more = append(more, ch)
			}
		}
		return more
	}
}
