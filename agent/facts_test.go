package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/tools/bash"
)

// Policy reads what the real tools declare: /tools lists read, glob and
// grep as read-only, and plan mode runs them and refuses bash, write and edit.
func TestToolsDeclareFacts(t *testing.T) {
	e := newStEnv(t)
	e.tools = bash.Register
	calls := []struct{ id, name, args string }{
		{"r", "read", `{"file_path":"a.go"}`},
		{"g", "glob", `{"pattern":"*.go"}`},
		{"s", "grep", `{"pattern":"package"}`},
		{"b", "bash", `{"command":"touch made-by-bash"}`},
		{"w", "write", `{"file_path":"new.txt","content":"x"}`},
		{"e", "edit", `{"file_path":"a.go","old_string":"package a","new_string":"package b"}`},
	}
	var parts []string
	for _, c := range calls {
		parts = append(parts, `{"tool_call":{"id":"`+c.id+`","name":"`+c.name+`","arguments":`+c.args+`}}`)
	}
	a, c := e.agent(stScript(t, `{"parts":[`+strings.Join(parts, ",")+`]}`, `{"parts":[{"text":"planned"}]}`), acp.ClientCapabilities{})
	id := e.newSession(a)

	var listing strings.Builder
	for _, u := range e.prompt(a, c, id, "/tools") {
		var n struct {
			Update struct {
				Content struct{ Text string } `json:"content"`
			} `json:"update"`
		}
		json.Unmarshal([]byte(u), &n)
		listing.WriteString(n.Update.Content.Text)
	}
	for _, name := range []string{"read", "glob", "grep"} {
		if !strings.Contains(listing.String(), "`"+name+"`") || !lineHas(listing.String(), "`"+name+"`", "(read-only)") {
			t.Errorf("/tools does not list %s as read-only:\n%s", name, listing.String())
		}
	}
	for _, name := range []string{"bash", "write", "edit"} {
		if lineHas(listing.String(), "`"+name+"`", "(read-only)") {
			t.Errorf("/tools lists %s as read-only", name)
		}
	}

	if _, err := a.SetSessionMode(t.Context(), &acp.SetModeRequest{SessionID: id, ModeID: ModePlan}); err != nil {
		t.Fatal(err)
	}
	final := map[string]string{}
	for _, u := range e.prompt(a, c, id, "plan it") {
		var n struct {
			Update struct {
				Kind   string `json:"sessionUpdate"`
				ID     string `json:"toolCallId"`
				Status string `json:"status"`
			} `json:"update"`
		}
		json.Unmarshal([]byte(u), &n)
		if n.Update.Kind == "tool_call_update" && n.Update.Status != "" {
			final[n.Update.ID] = n.Update.Status
		}
	}
	for _, c := range calls {
		want := "completed"
		if c.name == "bash" || c.name == "write" || c.name == "edit" {
			want = "failed"
		}
		if final[c.id] != want {
			t.Errorf("plan mode: %s ended %q, want %s", c.name, final[c.id], want)
		}
	}
	for _, f := range []string{"made-by-bash", "new.txt"} {
		if _, err := os.Stat(filepath.Join(e.cwd, f)); err == nil {
			t.Errorf("plan mode let %s be made", f)
		}
	}
}

// lineHas reports whether the line of text that holds key also holds want.
func lineHas(text, key, want string) bool {
	for l := range strings.Lines(text) {
		if strings.Contains(l, key) {
			return strings.Contains(l, want)
		}
	}
	return false
}
