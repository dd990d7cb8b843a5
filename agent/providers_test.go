package agent

import (
	"context"
	"iter"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/model/route"
)

type echoModel string

func (e echoModel) Stream(context.Context, *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) { yield(model.Event{Text: string(e)}, nil) }
}

// The providers methods are advertised and served only with a routing
// table that has a provider; they answer in the schema's shapes, and a
// refusal is invalid params.
func TestProvidersOffered(t *testing.T) {
	full := route.New(nil)
	full.Add("deepseek", "https://api.deepseek.com", true)
	full.Add("local", "http://localhost:11434/v1", false)
	for _, tt := range []struct {
		name   string
		routes Routes
		want   bool
	}{
		{"no table", nil, false},
		{"an empty table (a scripted model)", route.New(nil), false},
		{"providers", full, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := New(nil, Options{Model: echoModel("x"), Routes: tt.routes})
			init, err := a.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := init.AgentCapabilities.Providers != nil; got != tt.want {
				t.Errorf("advertised %v, want %v", got, tt.want)
			}
			_, err = a.ListProviders(t.Context(), &acp.ListProvidersRequest{})
			if !tt.want {
				if protoCode(err) != acp.CodeMethodNotFound {
					t.Errorf("providers/list without providers: %v", err)
				}
				return
			}
			if _, err := a.DisableProvider(t.Context(), &acp.DisableProviderRequest{ProviderID: "local"}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.DisableProvider(t.Context(), &acp.DisableProviderRequest{ProviderID: "deepseek"}); protoCode(err) != acp.CodeInvalidParams {
				t.Errorf("disabling the required provider: %v", err)
			}
			if _, err := a.SetProvider(t.Context(), &acp.SetProviderRequest{ProviderID: "deepseek", APIType: "bedrock", BaseURL: "https://x.example"}); protoCode(err) != acp.CodeInvalidParams {
				t.Errorf("an unsupported apiType: %v", err)
			}
			if _, err := a.SetProvider(t.Context(), &acp.SetProviderRequest{ProviderID: "deepseek", APIType: "openai", BaseURL: "https://gw.example/v1",
				Headers: acp.Headers{"Authorization": "Bearer k"}}); err != nil {
				t.Fatal(err)
			}
			got, err := a.ListProviders(t.Context(), &acp.ListProvidersRequest{})
			if err != nil {
				t.Fatal(err)
			}
			want := &acp.ListProvidersResponse{Providers: []acp.ProviderInfo{
				{ProviderID: "deepseek", Supported: []string{"openai"}, Required: true, Current: &acp.ProviderCurrentConfig{APIType: "openai", BaseURL: "https://gw.example/v1"}},
				{ProviderID: "local", Supported: []string{"openai"}},
			}}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("providers/list (-want +got):\n%s", d)
			}
		})
	}
}
