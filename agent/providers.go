package agent

import (
	"context"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model/route"
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
	if err := a.o.Routes.Set(ctx, req.ProviderID, route.Route{APIType: req.APIType, BaseURL: req.BaseURL, Headers: req.Headers}); err != nil {
		return nil, acp.InvalidParams("invalid params: %v", err)
	}
	a.log.Info("provider set by the client", "provider", req.ProviderID, "baseUrl", req.BaseURL, "headers", req.Headers)
	return &acp.EmptyResponse{}, nil
}

// DisableProvider takes a provider out of use until it is set again.
func (a *Agent) DisableProvider(ctx context.Context, req *acp.DisableProviderRequest) (*acp.EmptyResponse, error) {
	if !a.offersProviders() {
		return nil, a.noProviders()
	}
	if err := a.o.Routes.Disable(req.ProviderID); err != nil {
		return nil, acp.InvalidParams("invalid params: %v", err)
	}
	a.log.Info("provider disabled by the client", "provider", req.ProviderID)
	return &acp.EmptyResponse{}, nil
}
