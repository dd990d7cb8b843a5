//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/mcpclient/mcptest"
	"github.com/acp-bridge/acp-bridge/sandbox"
)

// The test binary is also the stdio MCP server the bridge starts; init runs
// before TestMain, so the server mode wins over the bridge mode it inherits.
func init() {
	// Not in the sandbox helper (TestMain execs the server from there).
	if len(os.Args) < 2 || os.Args[1] != sandbox.HelperArg {
		mcptest.MaybeServe()
	}
}

// mcpSession starts the bridge with a scripted model, opens a session with
// a stdio and an HTTP MCP server, and returns the session id and the pid
// file of the stdio server. Every line out of the bridge is schema-checked.
func mcpSession(t *testing.T, mode, script string) (b *bridge, send func(string), recvUntil func(id string) []map[string]json.RawMessage, sid, pidFile string) {
	t.Helper()
	dir := t.TempDir()
	scriptPath := filepath.Join(dir, "script.json")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	remote := mcptest.HTTP(false, "X-Token: abc")
	t.Cleanup(remote.Close)
	b = startBridge(t, "--model", "script:"+scriptPath, "--log-level", "debug")
	c := newCheckedClient(t, b)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	init := c.recvUntil("1")
	var caps struct {
		AgentCapabilities struct {
			McpCapabilities struct{ HTTP, SSE bool }
		}
	}
	json.Unmarshal(init[len(init)-1]["result"], &caps)
	if !caps.AgentCapabilities.McpCapabilities.HTTP {
		t.Errorf("mcpCapabilities.http not advertised: %s", init[len(init)-1]["result"])
	}

	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[
		%s,
		{"type":"http","name":"web","url":%q,"headers":[{"name":"X-Token","value":"abc"}]}]}}`,
		dir, stdioServer(mode, dir), remote.URL))
	msgs := c.recvUntil("2")
	var sess struct{ SessionID string }
	if err := json.Unmarshal(msgs[len(msgs)-1]["result"], &sess); err != nil || sess.SessionID == "" {
		t.Fatalf("session/new: %s", msgs[len(msgs)-1]["error"])
	}
	return b, c.send, c.recvUntil, sess.SessionID, filepath.Join(dir, "pids")
}

// A scripted model calls a tool of each MCP server through the real
// binary: the editor is asked, the cards complete with the servers'
// answers, and the stdio server is gone once the editor disconnects.
func TestMCPEndToEnd(t *testing.T) {
	b, send, recvUntil, sid, pidFile := mcpSession(t, mcptest.ModeStdio, `{"responses":[
		{"parts":[{"text":"Asking the servers."},
		          {"tool_call":{"id":"c1","name":"mcp__tools__echo","arguments":{"text":"from the model"}}},
		          {"tool_call":{"id":"c2","name":"mcp__web__count","arguments":{"n":4}}}]},
		{"parts":[{"text":"Both answered."}]}]}`)
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, sid))
	msgs := recvUntil("3")
	if got := string(msgs[len(msgs)-1]["result"]); got != `{"stopReason":"end_turn"}` {
		t.Fatalf("prompt result %s", got)
	}
	asked := 0
	final := map[string]string{}
	for _, m := range msgs {
		if string(m["method"]) == `"session/request_permission"` {
			asked++
		}
		var p struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
				ToolCallID    string `json:"toolCallId"`
				Status        string `json:"status"`
			} `json:"update"`
		}
		json.Unmarshal(m["params"], &p)
		if p.Update.SessionUpdate == "tool_call_update" && p.Update.Status == "completed" {
			final[p.Update.ToolCallID] = string(m["params"])
		}
	}
	if asked != 2 {
		t.Errorf("permission asked %d times, want 2", asked)
	}
	if !strings.Contains(final["c1"], "echo: from the model") || !strings.Contains(final["c2"], "1 2 3 4") {
		t.Errorf("completed cards: %v", final)
	}
	pids := mcptest.PIDs(pidFile)
	if len(pids) != 1 || !mcptest.Alive(pids[0]) {
		t.Fatalf("stdio server pids %v", pids)
	}

	b.stdin.Close() // the editor disconnects
	if err := waitDead(pids[0], 10*time.Second); err != nil {
		t.Error(err)
	}
	b.cmd.Wait() // the bridge has exited: its stderr is complete
	if !strings.Contains(b.stderr.String(), "MCP server connected") {
		t.Errorf("no connection log line:\n%s", b.stderr)
	}
}

// A bridge killed outright (no chance to stop anything, as Zed stops an
// agent) takes its stdio MCP servers with it within 2 s, even one that
// ignores its stdin closing and SIGTERM, and what such a server started
// itself: the watchdog kills the server's whole process group.
func TestMCPServersDieWithTheBridge(t *testing.T) {
	b, _, _, _, pidFile := mcpSession(t, mcptest.ModeStubborn, `{"responses":[]}`)
	t.Cleanup(func() {
		for _, pid := range mcptest.PIDs(pidFile) {
			syscall.Kill(pid, syscall.SIGKILL) // if the test failed
		}
	})
	pids := mcptest.PIDs(pidFile)
	for wait := time.Now().Add(5 * time.Second); len(pids) < 2 && time.Now().Before(wait); pids = mcptest.PIDs(pidFile) {
		time.Sleep(10 * time.Millisecond) // the server's child writes its pid once started
	}
	if len(pids) != 2 || !mcptest.Alive(pids[0]) || !mcptest.Alive(pids[1]) {
		t.Fatalf("stdio server pids %v", pids)
	}
	b.cmd.Process.Kill()
	for i, what := range []string{"MCP server", "MCP server's child"} {
		if err := waitDead(pids[i], never); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
}

func waitDead(pid int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for mcptest.Alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("pid %d still alive after %s", pid, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}
