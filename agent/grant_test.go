package agent

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/registry"
)

// grantClient answers every permission request with one option and counts them.
type grantClient struct {
	stClient
	option string
	mu     sync.Mutex
	asked  int
}

func (c *grantClient) RequestPermission(context.Context, *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked++
	c.mu.Unlock()
	return &acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: c.option}}, nil
}

// An "always" answer outlives the process: a loaded session does not ask
// again for what the user already decided, allow or reject.
func TestAlwaysAnswersSurviveLoad(t *testing.T) {
	for _, tt := range []struct {
		option     string
		wantStatus string
	}{
		{optAllowAlways, `"status":"completed"`},
		{optRejectAlways, `"status":"failed"`},
	} {
		t.Run(tt.option, func(t *testing.T) {
			e := newStEnv(t)
			ran := 0
			e.tools = func(r *registry.Registry) {
				registry.MustAdd(r, registry.Tool[struct{}, string]{Name: "deploy", Description: "Deploy.",
					Run: func(context.Context, *registry.Call, struct{}) (string, error) { ran++; return "deployed", nil },
					Permission: func(*registry.Call, struct{}) *registry.Permission {
						return &registry.Permission{Reason: "deploys", Key: "deploy:prod", Subject: "deploys to prod"}
					},
				})
			}
			call := `{"parts":[{"tool_call":{"name":"deploy","arguments":{}}}]}`
			done := `{"parts":[{"text":"ok"}]}`
			newAgent := func(option string) (*Agent, *grantClient) {
				a, _ := e.agent(stScript(t, call, done, call, done), acp.ClientCapabilities{})
				c := &grantClient{option: option}
				a.client = c
				return a, c
			}
			a1, c1 := newAgent(tt.option)
			sid := e.newSession(a1)
			if _, err := a1.Prompt(t.Context(), &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("deploy")}}); err != nil {
				t.Fatal(err)
			}
			if c1.asked != 1 {
				t.Fatalf("first call asked %d times", c1.asked)
			}
			if _, err := a1.CloseSession(t.Context(), &acp.CloseSessionRequest{SessionID: sid}); err != nil {
				t.Fatal(err)
			}
			// A new process: the answer must come from the log.
			a2, c2 := newAgent(optRejectOnce)
			if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: sid, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
				t.Fatal(err)
			}
			n := c2.count()
			if _, err := a2.Prompt(t.Context(), &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("again")}}); err != nil {
				t.Fatal(err)
			}
			if c2.asked != 0 {
				t.Errorf("the loaded session asked again %d times", c2.asked)
			}
			var final bool
			for _, u := range c2.since(n) {
				if strings.Contains(u, `"sessionUpdate":"tool_call_update"`) && strings.Contains(u, tt.wantStatus) {
					final = true
				}
			}
			if !final {
				t.Errorf("the call after load did not end %s: %v", tt.wantStatus, c2.since(n))
			}
		})
	}
}
