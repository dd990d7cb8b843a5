package agent

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mcpclient/mcptest"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/rules"
	"github.com/acp-bridge/acp-bridge/settings"
	"github.com/acp-bridge/acp-bridge/tools/bash"
)

// The user's rules against the permission modes, in memory: what asks,
// what runs, and what the model reads.
func TestRulesAcrossModes(t *testing.T) {
	if _, err := bash.Find(); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		name    string
		mode    string
		perms   settings.Permissions
		command string
		asks    int
		want    string // in what the model reads
	}{
		{"deny in bypass", ModeBypass, settings.Permissions{Deny: []string{"Bash(rm -rf:*)"}}, "rm -rf x", 0, "deny rule `Bash(rm -rf:*)` (user, config.yaml) refuses it"},
		{"deny in plan names the rule", ModePlan, settings.Permissions{Deny: []string{"Bash(rm -rf:*)"}}, "rm -rf x", 0, "deny rule `Bash(rm -rf:*)`"},
		{"deny beats allow", ModeAsk, settings.Permissions{Deny: []string{"Bash(rm -rf:*)"}, Allow: []string{"Bash(rm:*)"}}, "rm -rf x", 0, "deny rule"},
		{"allow answers the tool's ask", ModeAsk, settings.Permissions{Allow: []string{"Bash(echo:*)"}}, "echo hi", 0, "hi"},
		{"allow does not open plan mode", ModePlan, settings.Permissions{Allow: []string{"Bash(echo:*)"}}, "echo hi", 0, "plan mode"},
		{"allow covers each command", ModeAsk, settings.Permissions{Allow: []string{"Bash(echo:*)"}}, "echo hi; touch x", 1, "hi"},
		{"ask asks in bypass", ModeBypass, settings.Permissions{Ask: []string{"Bash(echo:*)"}}, "echo hi", 1, "hi"},
		{"ask beats allow", ModeAsk, settings.Permissions{Ask: []string{"Bash(echo hi)"}, Allow: []string{"Bash(echo:*)"}}, "echo hi", 1, "hi"},
		{"no rule: the mode", ModeAsk, settings.Permissions{}, "echo hi", 1, "hi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol, errs := settings.Section{Permissions: tc.perms}.Compile(rules.Source{Kind: "user", Path: "config.yaml"}, "")
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			reg := registry.New()
			bash.Register(reg)
			m := &recorder{p: scriptOf(t,
				[]map[string]any{toolCallPart(t, "call_1", "bash", map[string]any{"command": tc.command})},
				[]map[string]any{{"text": "done"}},
			)}
			e := newEditor(t, Options{Registry: reg, Model: m, PermissionMode: tc.mode, Policy: pol})
			var asked atomic.Int32
			e.permission = func(*acp.RequestPermissionRequest) acp.RequestPermissionResponse {
				asked.Add(1)
				return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: "allow-once"}}
			}
			if _, err := e.prompt(e.newSession(t.TempDir()), "go"); err != nil {
				t.Fatal(err)
			}
			if got := int(asked.Load()); got != tc.asks {
				t.Errorf("asked %d times, want %d", got, tc.asks)
			}
			reqs := m.requests()
			var read string
			for _, msg := range reqs[len(reqs)-1].Messages {
				if msg.Role == model.RoleTool {
					read = msg.Content
				}
			}
			if !strings.Contains(read, tc.want) {
				t.Errorf("the model read %q, want %q in it", read, tc.want)
			}
		})
	}
}

// An MCP server's timeout covers each of its tools, and a rule names an
// MCP tool as mcp__server__tool.
func TestMCPServerTimeoutAndRule(t *testing.T) {
	srv, _ := stdioMCP(t, "srv", mcptest.ModeStdio)
	pol, errs := settings.Section{Permissions: settings.Permissions{Deny: []string{"mcp__srv__fail"}},
		Timeouts: map[string]string{"mcp__srv": "300ms"}}.Compile(rules.Source{Kind: "user", Path: "config.yaml"}, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	m := &recorder{p: scriptOf(t,
		[]map[string]any{
			toolCallPart(t, "call_1", "mcp__srv__slow", map[string]any{"ms": 20000}),
			toolCallPart(t, "call_2", "mcp__srv__fail", map[string]any{}),
			toolCallPart(t, "call_3", "mcp__srv__echo", map[string]any{"text": "still here"}),
		},
		[]map[string]any{{"text": "done"}},
	)}
	e := newEditor(t, Options{Model: m, PermissionMode: ModeBypass, Policy: pol})
	sid := e.newSessionWith(t.TempDir(), []acp.McpServer{srv})
	start := time.Now()
	if _, err := e.prompt(sid, "go"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the turn took %s: the server's timeout did not end the slow call", d)
	}
	reqs := m.requests()
	read := map[string]string{}
	for _, msg := range reqs[len(reqs)-1].Messages {
		if msg.Role == model.RoleTool {
			read[msg.ToolCallID] = msg.Content
		}
	}
	for id, want := range map[string]string{"call_1": "timed out, stopped after 300ms: timeouts.mcp__srv in config.yaml", "call_2": "deny rule `mcp__srv__fail`", "call_3": "still here"} {
		if !strings.Contains(read[id], want) {
			t.Errorf("%s: the model read %q, want %q in it", id, read[id], want)
		}
	}
}
