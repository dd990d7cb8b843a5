package acp

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// Methods of provider configuration (unstable): the client tells the agent
// which endpoint (and with which headers, the key among them) a provider's
// model requests go to.
const (
	MethodProvidersList    = "providers/list"
	MethodProvidersSet     = "providers/set"
	MethodProvidersDisable = "providers/disable"
)

// ProviderConfigurer serves providers/list, providers/set and
// providers/disable (unstable), advertised as agentCapabilities.providers.
type ProviderConfigurer interface {
	ListProviders(ctx context.Context, req *ListProvidersRequest) (*ListProvidersResponse, error)
	SetProvider(ctx context.Context, req *SetProviderRequest) (*EmptyResponse, error)
	DisableProvider(ctx context.Context, req *DisableProviderRequest) (*EmptyResponse, error)
}

// Well-known apiType values (LlmProtocol). Others are allowed on the wire
// and must be handled gracefully.
const (
	ProtocolOpenAI    = "openai"
	ProtocolAnthropic = "anthropic"
	ProtocolAzure     = "azure"
	ProtocolVertex    = "vertex"
	ProtocolBedrock   = "bedrock"
)

type ListProvidersRequest struct {
	Meta Meta `json:"_meta,omitempty"`
}

type ListProvidersResponse struct {
	Providers []ProviderInfo `json:"providers"`
	Meta      Meta           `json:"_meta,omitempty"`
}

// ProviderInfo is one configurable provider. Current nil means disabled
// (sent as null: the schema allows it and a client reads it as such).
type ProviderInfo struct {
	ProviderID string                 `json:"providerId"`
	Supported  []string               `json:"supported"`
	Required   bool                   `json:"required"`
	Current    *ProviderCurrentConfig `json:"current"`
	Meta       Meta                   `json:"_meta,omitempty"`
}

// ProviderCurrentConfig is the non-secret routing of a provider: never
// its headers.
type ProviderCurrentConfig struct {
	APIType string `json:"apiType"`
	BaseURL string `json:"baseUrl"`
	Meta    Meta   `json:"_meta,omitempty"`
}

// SetProviderRequest replaces the whole configuration of one provider.
type SetProviderRequest struct {
	ProviderID string  `json:"providerId"`
	APIType    string  `json:"apiType"`
	BaseURL    string  `json:"baseUrl"`
	Headers    Headers `json:"headers,omitempty"`
	Meta       Meta    `json:"_meta,omitempty"`
}

type DisableProviderRequest struct {
	ProviderID string `json:"providerId"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// Headers are HTTP headers a client gives for a provider, an API key
// among them. Printed or logged they show their names only, so a request
// that reaches a log by mistake does not carry the key with it.
type Headers map[string]string

// String lists the header names, each value redacted.
func (h Headers) String() string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k+": [redacted]")
	}
	slices.Sort(names)
	return "{" + strings.Join(names, ", ") + "}"
}

// Format makes every fmt verb (%v, %+v, %#v, %s) print String.
func (h Headers) Format(f fmt.State, _ rune) { fmt.Fprint(f, h.String()) }

// LogValue is what slog records.
func (h Headers) LogValue() slog.Value { return slog.StringValue(h.String()) }

// LogValue is what slog records of a request: a JSON log handler would
// otherwise marshal it whole, header values included.
func (r *SetProviderRequest) LogValue() slog.Value {
	return slog.GroupValue(slog.String("providerId", r.ProviderID), slog.String("apiType", r.APIType),
		slog.String("baseUrl", r.BaseURL), slog.Any("headers", r.Headers))
}
