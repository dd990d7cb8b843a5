package conformance_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acp-bridge/acp-bridge/mcpclient/mcptest"
)

// TestTypeScriptProviders: through the real binary, with the official SDK
// (its /unstable entry point) as the client, providers/list shows the
// configured endpoint, a set with an API type the bridge does not speak is
// refused, the set routes the provider to another endpoint, and the next
// turn's model request goes there with the key the client gave. Every
// message is valid against the SDK's schemas.
func TestTypeScriptProviders(t *testing.T) {
	f := newTSFeatures(t)
	configured := &featureModel{t: t, answer: func(*featureModel, *http.Request, map[string]any) string { return sseText("configured") }}
	routed := &featureModel{t: t, answer: func(*featureModel, *http.Request, map[string]any) string { return sseText("routed") }}
	srvA, srvB := httptest.NewServer(configured), httptest.NewServer(routed)
	defer srvA.Close()
	defer srvB.Close()
	const key = "sk-ts-provider-key"
	seen := f.run(srvA, "", map[string]any{"name": "providers", "prompt": "hello",
		"set": map[string]any{"providerId": "endpoint", "apiType": "openai", "baseUrl": srvB.URL + "/v1",
			"headers": map[string]any{"Authorization": "Bearer " + key}}}, modelArgs(srvA), "MOCK_KEY=sk-configured")

	if seen.Responses["caps"]["providers"] == nil {
		t.Errorf("agentCapabilities without providers: %v", seen.Responses["caps"])
	}
	entry := func(url string) any {
		return []any{map[string]any{"providerId": "endpoint", "supported": []any{"openai"}, "required": true,
			"current": map[string]any{"apiType": "openai", "baseUrl": url}}}
	}
	if d := cmp.Diff(entry(srvA.URL+"/v1"), seen.Responses["list0"]["providers"]); d != "" {
		t.Errorf("providers/list before the set (-want +got):\n%s", d)
	}
	if e, ok := seen.Errors["badSet"]; !ok || e.Code != -32602 || strings.Contains(e.Message, key) {
		t.Errorf("providers/set with apiType anthropic: %+v (refused: %v)", e, ok)
	}
	if _, ok := seen.Errors["set"]; ok {
		t.Fatalf("providers/set failed: %+v", seen.Errors["set"])
	}
	if d := cmp.Diff(entry(srvB.URL+"/v1"), seen.Responses["list1"]["providers"]); d != "" {
		t.Errorf("providers/list after the set (-want +got):\n%s", d)
	}
	if r := seen.Responses["prompt"]; r["stopReason"] != "end_turn" {
		t.Errorf("prompt answered %v (%+v)", r, seen.Errors["prompt"])
	}
	routed.mu.Lock()
	auths := append([]string(nil), routed.auths...)
	routed.mu.Unlock()
	if d := cmp.Diff([]string{"Bearer " + key}, auths); d != "" {
		t.Errorf("the endpoint set got (-want +got):\n%s", d)
	}
	if n := len(configured.requests()); n != 0 {
		t.Errorf("the configured endpoint still got %d requests", n)
	}
}

// TestTypeScriptMCPElicitation: through the real binary, with the official
// SDK as the client, a real MCP server (the go-sdk's, over streamable
// HTTP) asks for a form while the model calls its tool: the question
// reaches the client as elicitation/create for the session, with the
// server's schema, and the client's answer reaches the server, which
// reports it in the tool's result the model reads.
func TestTypeScriptMCPElicitation(t *testing.T) {
	f := newTSFeatures(t)
	mcpSrv := mcptest.HTTP(false, "")
	defer mcpSrv.Close()
	model := &featureModel{t: t, answer: func(_ *featureModel, _ *http.Request, body map[string]any) string {
		if role, c := lastMessage(body); role == "tool" {
			return sseText("The server got: " + c)
		}
		return sseCall("call_m", "mcp__tools__ask", map[string]any{})
	}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	seen := f.run(srv, "", map[string]any{"name": "mcpElicitation", "prompt": "pick a colour",
		"clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
		"mcpServers":         []any{map[string]any{"type": "http", "name": "tools", "url": mcpSrv.URL, "headers": []any{}}},
		"elicitationAnswer":  map[string]any{"action": "accept", "content": map[string]any{"colour": "blue"}}}, modelArgs(srv), "MOCK_KEY=sk-ts")

	if r := seen.Responses["prompt"]; r["stopReason"] != "end_turn" {
		t.Fatalf("prompt answered %v (%+v)", r, seen.Errors["prompt"])
	}
	sid, _ := seen.Responses["new"]["sessionId"].(string)
	if len(seen.Elicitations) != 1 {
		t.Fatalf("elicitations %v, want one", seen.Elicitations)
	}
	el := seen.Elicitations[0]
	schema, _ := json.Marshal(el["requestedSchema"])
	if el["sessionId"] != sid || el["mode"] != "form" || el["message"] != "Which colour?" || !strings.Contains(string(schema), `"enum":["red","blue"]`) {
		t.Errorf("elicitation/create %v", el)
	}
	reqs := model.requests()
	if _, c := lastMessage(reqs[len(reqs)-1]); !strings.Contains(c, `answer: accept {"colour":"blue"}`) {
		t.Errorf("the model read %q: the answer did not reach the server", c)
	}
}

// TestTypeScriptMCPURLElicitation: the same with a URL: a real MCP server
// (mcptest.SignInHTTP) needs the user to visit a page; the official SDK
// client gets elicitation/create in URL mode with the server's URL and
// elicitation id, its accept reaches the server, and the server's
// completion arrives as elicitation/complete.
func TestTypeScriptMCPURLElicitation(t *testing.T) {
	f := newTSFeatures(t)
	mcpSrv := mcptest.SignInHTTP()
	defer mcpSrv.Close()
	model := &featureModel{t: t, answer: func(_ *featureModel, _ *http.Request, body map[string]any) string {
		if role, c := lastMessage(body); role == "tool" {
			return sseText("The server said: " + c)
		}
		return sseCall("call_s", "mcp__signin__sign_in", map[string]any{})
	}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	seen := f.run(srv, "", map[string]any{"name": "mcpElicitation", "prompt": "sign me in", "waitCompletion": true,
		"clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}},
		"mcpServers":         []any{map[string]any{"type": "http", "name": "signin", "url": mcpSrv.URL, "headers": []any{}}},
		"elicitationAnswer":  map[string]any{"action": "accept"}}, modelArgs(srv), "MOCK_KEY=sk-ts")

	if r := seen.Responses["prompt"]; r["stopReason"] != "end_turn" {
		t.Fatalf("prompt answered %v (%+v)", r, seen.Errors["prompt"])
	}
	sid, _ := seen.Responses["new"]["sessionId"].(string)
	want := []map[string]any{{"sessionId": sid, "mode": "url", "message": mcptest.SignInMessage, "url": mcptest.SignInURL, "elicitationId": mcptest.SignInID}}
	if d := cmp.Diff(want, seen.Elicitations); d != "" {
		t.Errorf("elicitation/create (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]map[string]any{{"elicitationId": mcptest.SignInID}}, seen.Completions); d != "" {
		t.Errorf("elicitation/complete (-want +got):\n%s", d)
	}
	reqs := model.requests()
	if _, c := lastMessage(reqs[len(reqs)-1]); !strings.Contains(c, "sign-in: accept") {
		t.Errorf("the model read %q: the answer did not reach the server", c)
	}
}
