package agent

import (
	"context"
	"maps"
	"slices"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model/route"
	"github.com/acp-bridge/acp-bridge/session"
)

// Routes is the provider routing an editor may change with providers/list,
// set and disable (ACP, unstable): package route's Table. The next model
// request of every session goes where it says.
type Routes interface {
	List() []route.Info
	Set(ctx context.Context, id string, r route.Route) error
	Disable(id string) error
}

var _ acp.ProviderConfigurer = (*Agent)(nil)

// offersProviders: the capability is advertised, and the methods served,
// only when there is a table with a provider in it.
func (a *Agent) offersProviders() bool {
	return a.o.Routes != nil && len(a.o.Routes.List()) > 0
}

func (a *Agent) noProviders() error {
	return acp.Errorf(acp.CodeMethodNotFound, "method not supported by this agent (no configurable providers: a scripted or single built-in model)")
}

// ListProviders shows each provider's current non-secret route.
func (a *Agent) ListProviders(ctx context.Context, req *acp.ListProvidersRequest) (*acp.ListProvidersResponse, error) {
	if !a.offersProviders() {
		return nil, a.noProviders()
	}
	resp := &acp.ListProvidersResponse{Providers: []acp.ProviderInfo{}}
	for _, in := range a.o.Routes.List() {
		p := acp.ProviderInfo{ProviderID: in.ID, Supported: in.Supported, Required: in.Required}
		if !in.Disabled {
			p.Current = &acp.ProviderCurrentConfig{APIType: in.APIType, BaseURL: in.BaseURL}
		}
		resp.Providers = append(resp.Providers, p)
	}
	return resp, nil
}

// SetProvider routes one provider's requests to the endpoint the client
// names, with its headers. The key in them is never logged: the log line
// names the provider and the base URL only.
func (a *Agent) SetProvider(ctx context.Context, req *acp.SetProviderRequest) (*acp.EmptyResponse, error) {
	if !a.offersProviders() {
		return nil, a.noProviders()
	}
	before := a.offeredModels()
	if err := a.o.Routes.Set(ctx, req.ProviderID, route.Route{APIType: req.APIType, BaseURL: req.BaseURL, Headers: req.Headers}); err != nil {
		return nil, acp.InvalidParams("invalid params: %v", err)
	}
	a.log.Info("provider set by the client", "provider", req.ProviderID, "baseUrl", req.BaseURL, "headers", req.Headers)
	a.refreshPickers(ctx, before)
	return &acp.EmptyResponse{}, nil
}

// DisableProvider takes a provider out of use until it is set again.
func (a *Agent) DisableProvider(ctx context.Context, req *acp.DisableProviderRequest) (*acp.EmptyResponse, error) {
	if !a.offersProviders() {
		return nil, a.noProviders()
	}
	before := a.offeredModels()
	if err := a.o.Routes.Disable(req.ProviderID); err != nil {
		return nil, acp.InvalidParams("invalid params: %v", err)
	}
	a.log.Info("provider disabled by the client", "provider", req.ProviderID)
	a.refreshPickers(ctx, before)
	return &acp.EmptyResponse{}, nil
}

// offeredModels are the ids the model picker offers now.
func (a *Agent) offeredModels() []string {
	var ids []string
	for _, m := range a.models.Models() {
		ids = append(ids, m.ID)
	}
	return ids
}

// refreshPickers shows every live session the models a set brought (the
// new endpoint's list), or a disable took away, when the offer changed: a controls event with the
// session's values and the new choices, which the editor gets as
// config_option_update, so the model is picked the usual way.
func (a *Agent) refreshPickers(ctx context.Context, before []string) {
	if slices.Equal(before, a.offeredModels()) {
		return
	}
	a.mu.Lock()
	live := slices.Collect(maps.Values(a.sessions))
	a.mu.Unlock()
	for _, s := range live {
		s.emit(ctx, session.New(s.ctl.of(s.ctl.read())))
	}
}
