package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/registry"
)

// probeArgs counts its typed decodes.
type probeArgs struct {
	Path string `json:"path"`
}

var probeDecodes atomic.Int64

func (a *probeArgs) UnmarshalJSON(b []byte) error {
	probeDecodes.Add(1)
	type plain probeArgs
	return json.Unmarshal(b, (*plain)(a))
}

// probeTool reads its input everywhere a session does: the concurrency
// check, permission (the gate, then the approval request's key and option
// names), the body, and both presenters of its card.
func probeTool(reg *registry.Registry) {
	registry.MustAdd(reg, registry.Tool[probeArgs, string]{
		Name:        "probe",
		Description: "Probe a path.",
		Run: func(_ context.Context, _ *registry.Call, in probeArgs) (string, error) {
			return "probed " + in.Path, nil
		},
		ConcurrencySafe: func(probeArgs) bool { return true },
		Permission: func(_ *registry.Call, in probeArgs) *registry.Permission {
			return &registry.Permission{Reason: "probes", Key: "probe:" + in.Path, Subject: "probing `" + in.Path + "`"}
		},
		PresentCall: func(in probeArgs) registry.View { return registry.GenericCard{Title: "Probe " + in.Path, Kind: "read"} },
		PresentResult: func(in probeArgs, r registry.Result) registry.View {
			return registry.GenericCard{Title: "Probed " + in.Path, Kind: "read"}
		},
	})
}

// TestArgumentsDecodedOncePerCallInASession: in a live session a tool
// call's arguments are decoded once, shared by the concurrency check,
// the permission gate and request, the body and the card's presenters,
// natively and in Code Mode alike; a session/load replays the cards from
// the stored arguments, decoding each once.
func TestArgumentsDecodedOncePerCallInASession(t *testing.T) {
	program := `const [a, b] = await Promise.all([tools.probe({path: "a"}), tools.probe({path: "b"})]);
const c = await tools.probe({path: "c"});
return [a, b, c].join(", ");`
	tests := []struct {
		name     string
		mode     string
		response string
		calls    int
	}{
		{"native", "native", `{"parts":[
			{"tool_call":{"id":"p1","name":"probe","arguments":{"path":"a"}}},
			{"tool_call":{"id":"p2","name":"probe","arguments":{"path":"b"}}},
			{"tool_call":{"id":"p3","name":"probe","arguments":{"path":"c"}}}]}`, 3},
		{"code mode", "code", `{"parts":[{"tool_call":{"id":"run","name":"run_code","arguments":` +
			string(mustJSON(t, map[string]string{"code": program, "description": "Probe three paths"})) + `}}]}`, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newStEnv(t)
			e.tools = probeTool
			a, c := e.agent(stScript(t, tt.response, `{"parts":[{"text":"Done."}]}`), acp.ClientCapabilities{})
			id := e.newSession(a)
			if _, err := a.SetSessionConfigOption(t.Context(), &acp.SetConfigOptionRequest{SessionID: id, ConfigID: "tools_mode", Value: mustJSON(t, tt.mode)}); err != nil {
				t.Fatal(err)
			}
			probeDecodes.Store(0)
			n := c.count()
			if _, err := a.Prompt(t.Context(), &acp.PromptRequest{SessionID: id, Prompt: []acp.ContentBlock{acp.TextBlock("probe")}}); err != nil {
				t.Fatal(err)
			}
			if got := probeDecodes.Load(); got != int64(tt.calls) {
				t.Errorf("%d typed decodes for %d calls, want one per call", got, tt.calls)
			}
			live := strings.Join(c.since(n), "\n")
			for _, p := range []string{"a", "b", "c"} {
				for _, want := range []string{`"title":"Probe ` + p + `"`, `"title":"Probed ` + p + `"`} {
					if !strings.Contains(live, want) {
						t.Errorf("live updates lack %s", want)
					}
				}
			}

			if _, err := a.CloseSession(t.Context(), &acp.CloseSessionRequest{SessionID: id}); err != nil {
				t.Fatal(err)
			}
			a2, c2 := e.agent(nil, acp.ClientCapabilities{})
			probeDecodes.Store(0)
			if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
				t.Fatal(err)
			}
			if got := probeDecodes.Load(); got != int64(tt.calls) {
				t.Errorf("replay: %d typed decodes for %d cards, want one per card", got, tt.calls)
			}
			replayed := strings.Join(c2.since(0), "\n")
			for _, p := range []string{"a", "b", "c"} {
				for _, want := range []string{`"title":"Probe ` + p + `"`, `"title":"Probed ` + p + `"`} {
					if !strings.Contains(replayed, want) {
						t.Errorf("replay lacks %s", want)
					}
				}
			}
		})
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
