package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileToolArguments: a model (or a prompt injection steering it)
// sends hostile tool arguments through the real binary. Paths that leave
// the workspace (traversal, a symlink pointing out) ask the user first, and
// are refused when the user rejects; NUL bytes and wrong types fail the call
// cleanly; nothing outside the workspace is read or written; the turn ends
// normally and the process keeps serving.
func TestHostileToolArguments(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	outside := filepath.Join(root, "outside")
	os.MkdirAll(work, 0o755)
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("TOP SECRET\n"), 0o644)
	os.Symlink(outside, filepath.Join(work, "escape"))
	calls := []struct{ id, name, args string }{
		{"traverse", "read", `{"file_path":"../outside/secret.txt"}`},
		{"absolute", "read", fmt.Sprintf(`{"file_path":%q}`, filepath.Join(outside, "secret.txt"))},
		{"symlink", "read", `{"file_path":"escape/secret.txt"}`},
		{"write-out", "write", `{"file_path":"escape/planted.txt","content":"x"}`},
		{"nul", "read", `{"file_path":"a\u0000b.txt"}`},
		{"wrong-type", "read", `{"file_path":42}`},
		{"grep-out", "grep", `{"pattern":"SECRET","path":"escape"}`},
		{"huge-offset", "read", `{"file_path":"escape/secret.txt","offset":9223372036854775807}`},
	}
	var parts []string
	for _, c := range calls {
		parts = append(parts, fmt.Sprintf(`{"tool_call":{"id":%q,"name":%q,"arguments":%s}}`, c.id, c.name, c.args))
	}
	script := filepath.Join(root, "script.json")
	os.WriteFile(script, []byte(`{"responses":[{"parts":[`+strings.Join(parts, ",")+`]},{"parts":[{"text":"done"}]}]}`), 0o644)
	b := startBridge(t, "--model", "script:"+script)
	b.send(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":1}}`)
	b.response(`"i"`)
	b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"n","method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, work))
	var created struct {
		Result struct{ SessionID string } `json:"result"`
	}
	json.Unmarshal(b.response(`"n"`), &created)
	b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, created.Result.SessionID))

	asked := map[string]bool{}
	final := map[string]string{} // call id -> final status
	for {
		line := b.next()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		switch {
		case m.Method == "session/request_permission":
			var p struct {
				ToolCall struct{ ToolCallID string } `json:"toolCall"`
			}
			json.Unmarshal(m.Params, &p)
			asked[p.ToolCall.ToolCallID] = true
			// The user says no to everything that leaves the workspace.
			b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"reject-once"}}}`, m.ID))
		case m.Method == "session/update":
			var p struct {
				Update struct {
					Kind   string `json:"sessionUpdate"`
					ID     string `json:"toolCallId"`
					Status string `json:"status"`
				} `json:"update"`
			}
			json.Unmarshal(m.Params, &p)
			if p.Update.Kind == "tool_call_update" && (p.Update.Status == "completed" || p.Update.Status == "failed") {
				final[p.Update.ID] = p.Update.Status
			}
			if strings.Contains(string(line), "TOP SECRET") {
				t.Errorf("content from outside the workspace reached the editor: %s", line)
			}
		case m.Method == "" && string(m.ID) == `"p"`:
			if !strings.Contains(string(m.Result), "end_turn") {
				t.Fatalf("turn: %s", line)
			}
			goto done
		}
	}
done:
	for _, c := range calls {
		if final[c.id] != "failed" {
			t.Errorf("%s: final status %q, want failed", c.id, final[c.id])
		}
	}
	for _, id := range []string{"traverse", "absolute", "symlink", "write-out", "grep-out", "huge-offset"} {
		if !asked[id] {
			t.Errorf("%s: left the workspace without asking", id)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "planted.txt")); err == nil {
		t.Error("a rejected write landed outside the workspace")
	}
	b.send(`{"jsonrpc":"2.0","id":"again","method":"initialize","params":{"protocolVersion":1}}`)
	b.response(`"again"`)
}
