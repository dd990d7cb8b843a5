package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mcpclient/mcptest"
)

// The test binary doubles as a stdio MCP server (see mcptest.Env).
func init() { mcptest.MaybeServe() }

func stdioMCP(t *testing.T, name, mode string) (acp.McpServer, string) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	s := acp.McpServer{Name: name, Command: os.Args[0], Args: []string{}}
	for _, kv := range mcptest.Env(mode, pidFile) {
		k, v, _ := strings.Cut(kv, "=")
		s.Env = append(s.Env, acp.EnvVariable{Name: k, Value: v})
	}
	return s, pidFile
}

func (e *editor) newSessionWith(cwd string, servers []acp.McpServer) string {
	e.t.Helper()
	if err := e.call(acp.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, &acp.InitializeResponse{}); err != nil {
		e.t.Fatal(err)
	}
	var s acp.NewSessionResponse
	if err := e.call(acp.MethodSessionNew, acp.NewSessionRequest{Cwd: cwd, McpServers: servers}, &s); err != nil {
		e.t.Fatal(err)
	}
	return s.SessionID
}

// messages returns the agent message text received so far.
func (e *editor) messages() string {
	var b strings.Builder
	for _, u := range e.updates() {
		if m, ok := u.(*acp.AgentMessageChunk); ok {
			b.WriteString(m.Content.Text)
		}
	}
	return b.String()
}

func (e *editor) waitForMessageContaining(sub string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(e.messages(), sub) {
		if time.Now().After(deadline) {
			e.t.Fatalf("no agent message containing %q; got %q", sub, e.messages())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestInitializeAdvertisesMCPTransports(t *testing.T) {
	e := newEditor(t, Options{})
	var r acp.InitializeResponse
	if err := e.call(acp.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, &r); err != nil {
		t.Fatal(err)
	}
	if !r.AgentCapabilities.McpCapabilities.HTTP || !r.AgentCapabilities.McpCapabilities.SSE {
		t.Errorf("mcpCapabilities = %+v", r.AgentCapabilities.McpCapabilities)
	}
}

// Tools of every server given run through the pipeline: the user is asked,
// results become content blocks, tool errors failed cards. Servers that
// cannot start are reported to the user after session/new, and the
// session works without them.
func TestMCPServersInASession(t *testing.T) {
	remote := mcptest.HTTP(false, "Authorization: Bearer t0k")
	t.Cleanup(remote.Close)
	local, pidFile := stdioMCP(t, "local", mcptest.ModeStdio)
	broken, _ := stdioMCP(t, "broken", mcptest.ModeFail)
	e := newEditor(t, Options{Model: script(t, `{"responses":[
		{"parts":[{"tool_call":{"id":"c1","name":"mcp__remote__echo","arguments":{"text":"hi"}}},
		          {"tool_call":{"id":"c2","name":"mcp__local__resource","arguments":{}}},
		          {"tool_call":{"id":"c3","name":"mcp__local__fail","arguments":{}}},
		          {"tool_call":{"id":"c4","name":"mcp__remote__count","arguments":{"n":0}}},
		          {"tool_call":{"id":"c5","name":"mcp__remote__image","arguments":{}}}]},
		{"parts":[{"text":"All done."}]}]}`)})
	var mu sync.Mutex
	var asked []string
	e.permission = func(r *acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		mu.Lock()
		asked = append(asked, r.ToolCall.ToolCallID)
		mu.Unlock()
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: "allow-once"}}
	}
	servers := []acp.McpServer{
		{Type: "http", Name: "remote", URL: remote.URL, Headers: []acp.HTTPHeader{{Name: "Authorization", Value: "Bearer t0k"}}},
		local, broken,
		{Type: "acp", Name: "odd"},
	}
	start := time.Now()
	sid := e.newSessionWith(t.TempDir(), servers)
	// A session/new that waited on the broken servers would not return at
	// all; the bound is for that, not for speed (the machine may be busy).
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("session/new took %s", d)
	}
	e.waitForMessageContaining(`MCP server "broken" failed to start`)
	e.waitForMessageContaining(`MCP server "odd" failed to start`)
	if !strings.Contains(e.messages(), "no API token") {
		t.Errorf("the failure does not say why: %q", e.messages())
	}
	before := len(e.updates())

	stop, err := e.prompt(sid, "use the tools")
	if err != nil || stop != acp.StopEndTurn {
		t.Fatalf("stop=%q err=%v", stop, err)
	}
	mu.Lock()
	// c4's arguments break the server's schema: the server, not the
	// harness, validates them, so it is asked about like the others.
	if !slices.Equal(asked, []string{"c1", "c2", "c3", "c4", "c5"}) {
		t.Errorf("permission asked for %v", asked)
	}
	mu.Unlock()
	titles := map[string]string{}
	final := map[string]*acp.ToolCallUpdate{}
	for _, u := range e.updates()[before:] {
		switch u := u.(type) {
		case *acp.ToolCall:
			titles[u.ToolCallID] = u.Title
		case *acp.ToolCallUpdate:
			if u.Status != nil && (*u.Status == acp.StatusCompleted || *u.Status == acp.StatusFailed) {
				final[u.ToolCallID] = u
			}
		}
	}
	if titles["c1"] != "remote: echo" {
		t.Errorf("card title %q", titles["c1"])
	}
	type want struct {
		status acp.ToolCallStatus
		block  string // type of the first content block
		text   string // in its JSON
	}
	for id, w := range map[string]want{
		"c1": {acp.StatusCompleted, "text", "echo: hi"},
		"c2": {acp.StatusCompleted, "resource", "remember the milk"},
		"c3": {acp.StatusFailed, "text", "it broke"},
		"c4": {acp.StatusFailed, "text", "n must be at least 1"},
		"c5": {acp.StatusCompleted, "image", "image/png"},
	} {
		u := final[id]
		if u == nil || *u.Status != w.status || len(u.Content) == 0 || u.Content[0].Content == nil || u.Content[0].Content.Type != w.block {
			t.Errorf("%s: final update %+v", id, u)
			continue
		}
		b, _ := json.Marshal(u)
		if !strings.Contains(string(b), w.text) {
			t.Errorf("%s: %s lacks %q", id, b, w.text)
		}
	}
	if u := final["c2"]; u != nil && (len(u.Content) != 2 || u.Content[1].Content.Type != "resource_link") {
		t.Errorf("c2: want a resource and a resource_link, got %+v", u.Content)
	}

	// Closing the session stops its servers.
	if err := e.call(acp.MethodSessionClose, acp.CloseSessionRequest{SessionID: sid}, &acp.EmptyResponse{}); err != nil {
		t.Fatal(err)
	}
	for _, pid := range mcptest.PIDs(pidFile) {
		if mcptest.Alive(pid) {
			t.Errorf("server pid %d alive after session/close", pid)
		}
	}
}

// session/new waits for a slow server only up to the bound; the server
// joins later and its tools appear. A server that dies is reported and its
// tools go; tools/list_changed brings new ones.
func TestMCPSlowServerDeathAndListChanged(t *testing.T) {
	hang, hangPIDs := stdioMCP(t, "hang", mcptest.ModeHang)
	local, _ := stdioMCP(t, "local", mcptest.ModeStdio)
	e, ag := newEditorAgent(t, Options{MCPStartTimeout: 300 * time.Millisecond, Model: script(t, `{"responses":[
		{"parts":[{"tool_call":{"id":"c1","name":"mcp__local__add_tool","arguments":{"name":"fresh"}}}]},
		{"parts":[{"text":"added"}]},
		{"parts":[{"tool_call":{"id":"c2","name":"mcp__local__crash","arguments":{}}}]},
		{"parts":[{"text":"crashed"}]},
		{"parts":[{"text":"still here"}]}]}`)})
	start := time.Now()
	sid := e.newSessionWith(t.TempDir(), []acp.McpServer{hang, local})
	// The hung server never answers: a session/new that waited for it would
	// not return; the bound is for that, not for speed.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("session/new took %s with a hung server", d)
	}
	e.waitForMessageContaining(`MCP server "hang" is still starting`)
	s, err := ag.session(sid)
	if err != nil {
		t.Fatal(err)
	}
	// The local server may itself have needed more than the short bound.
	deadline := time.Now().Add(10 * time.Second)
	for s.scope.Get("mcp__local__echo") == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if s.scope.Get("mcp__local__echo") == nil {
		t.Fatal("the local server's tools never arrived")
	}

	if stop, err := e.prompt(sid, "add a tool"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("stop=%q err=%v", stop, err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for s.scope.Get("mcp__local__fresh") == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if s.scope.Get("mcp__local__fresh") == nil {
		t.Fatal("tools/list_changed did not add mcp__local__fresh")
	}

	if stop, err := e.prompt(sid, "crash it"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("stop=%q err=%v", stop, err)
	}
	e.waitForMessageContaining(`MCP server "local" stopped`)
	if !strings.Contains(e.messages(), "exit status 3") {
		t.Errorf("death report lacks the exit status: %q", e.messages())
	}
	if s.scope.Get("mcp__local__echo") != nil {
		t.Error("a dead server's tools are still offered")
	}
	// The session still works.
	if _, err := e.prompt(sid, "still there?"); err != nil {
		t.Fatal(err)
	}
	// Shutdown (the editor went away) stops even a server still starting.
	ag.Shutdown()
	for _, pid := range mcptest.PIDs(hangPIDs) {
		if mcptest.Alive(pid) {
			t.Errorf("hung server pid %d alive after shutdown", pid)
		}
	}
}

// With session.notices, a server that cannot start is a notice (severity
// error, a title naming it), not agent text; an MCP tool's card is named
// with its registry name, mcp__server__tool.
func TestMCPNoticesAndNames(t *testing.T) {
	remote := mcptest.HTTP(false, "")
	t.Cleanup(remote.Close)
	broken, _ := stdioMCP(t, "broken", mcptest.ModeFail)
	e := newEditor(t, Options{Model: script(t, `{"responses":[
		{"parts":[{"tool_call":{"id":"c1","name":"mcp__remote__echo","arguments":{"text":"hi"}}}]},
		{"parts":[{"text":"Done."}]}]}`)})
	e.permission = func(*acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: "allow-once"}}
	}
	caps := acp.ClientCapabilities{Session: acp.ClientSessionCaps{Notices: &acp.Empty{}}}
	if err := e.call(acp.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: caps}, &acp.InitializeResponse{}); err != nil {
		t.Fatal(err)
	}
	var s acp.NewSessionResponse
	if err := e.call(acp.MethodSessionNew, acp.NewSessionRequest{Cwd: t.TempDir(),
		McpServers: []acp.McpServer{{Type: "http", Name: "remote", URL: remote.URL}, broken}}, &s); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var notice *acp.Notice
	for notice == nil && time.Now().Before(deadline) {
		for _, u := range e.updates() {
			if n, ok := u.(*acp.Notice); ok && strings.Contains(n.Title, `"broken" failed to start`) {
				notice = n
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if notice == nil || notice.Severity != acp.NoticeError || notice.Description == "" {
		t.Fatalf("notice %+v, want an error notice for the broken server", notice)
	}
	if strings.Contains(e.messages(), "failed to start") {
		t.Errorf("the failure went out as agent text too: %q", e.messages())
	}
	if stop, err := e.prompt(s.SessionID, "echo"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("stop=%q err=%v", stop, err)
	}
	n := 0
	for _, u := range e.updates() {
		switch u := u.(type) {
		case *acp.ToolCall:
			n++
			if u.Name != "mcp__remote__echo" {
				t.Errorf("tool_call named %q", u.Name)
			}
		case *acp.ToolCallUpdate:
			if u.Name != "mcp__remote__echo" {
				t.Errorf("tool_call_update named %q", u.Name)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d tool calls", n)
	}
}
