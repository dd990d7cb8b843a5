package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryInstructionsAndCompaction drives the built binary against the
// mock: the system message carries the user's and the workspace's AGENTS.md
// and the environment block; a response whose usage passes 80 % of the
// window is followed by a summary request, the turn goes on from the
// summary, and a client that shows compactions gets compaction updates.
func TestBinaryInstructionsAndCompaction(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "AGENTS.md"), []byte("Workspace rule: tabs, not spaces.\n"), 0o644)

	m := &oaiMock{t: t}
	var system string
	m.steps = []func(http.ResponseWriter, map[string]any){
		func(w http.ResponseWriter, body map[string]any) {
			system = body["messages"].([]any)[0].(map[string]any)["content"].(string)
			sseWrite(w, 50, delta(`{"content":"First answer."}`, "stop"), usageOf(3400, 20)) // past 80 % of 4000
		},
		func(w http.ResponseWriter, body map[string]any) {
			msgs := body["messages"].([]any)
			if last := msgs[len(msgs)-1].(map[string]any)["content"].(string); !strings.HasPrefix(last, "Summarise") {
				t.Errorf("request 2 is not a summary request: %q", last)
			}
			sseWrite(w, 50, delta(`{"content":"The user said hi."}`, "stop"), usageOf(3450, 10))
		},
		func(w http.ResponseWriter, body map[string]any) {
			msgs := body["messages"].([]any)
			if first := msgs[1].(map[string]any)["content"].(string); !strings.Contains(first, "The user said hi.") {
				t.Errorf("request 3 does not start from the summary: %q", first)
			}
			sseWrite(w, 50, delta(`{"content":"Second answer."}`, "stop"), usageOf(300, 10))
		},
	}
	srv := httptest.NewServer(m)
	defer srv.Close()

	cfg := t.TempDir() // the last XDG_CONFIG_HOME given wins over startE2E's
	os.MkdirAll(filepath.Join(cfg, "acp-bridge"), 0o755)
	os.WriteFile(filepath.Join(cfg, "acp-bridge", "AGENTS.md"), []byte("User rule: answer briefly.\n"), 0o644)
	c := startE2E(t, []string{"MOCK_KEY=sk-e2e", "XDG_CONFIG_HOME=" + cfg},
		mockArgs(srv, "--context-window", "4000")...)
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"session": map[string]any{"compaction": map[string]any{}}}})
	sid := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})["sessionId"].(string)
	for _, q := range []string{"hi", "and then?"} {
		res := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": q}}})
		if res["stopReason"] != "end_turn" {
			t.Fatalf("%q: stopReason = %v\n%s", q, res["stopReason"], c.agentText())
		}
	}
	for _, w := range []string{"## " + filepath.Join(cfg, "acp-bridge", "AGENTS.md"), "User rule: answer briefly.", "## " + filepath.Join(work, "AGENTS.md"), "Workspace rule: tabs, not spaces.", "# Environment",
		"Workspace root (the working directory): " + work, "Git: not a git repository"} {
		if !strings.Contains(system, w) {
			t.Errorf("system message lacks %q:\n%s", w, system)
		}
	}
	var statuses []string
	for _, u := range c.updates("compaction_update") {
		statuses = append(statuses, u["status"].(string))
	}
	if strings.Join(statuses, " ") != "in_progress completed" || len(c.updates("compaction_summary_chunk")) == 0 {
		t.Errorf("compaction updates %v, %d summary chunks", statuses, len(c.updates("compaction_summary_chunk")))
	}
	if len(m.reqs) != 3 {
		t.Errorf("%d requests, want 3", len(m.reqs))
	}
}
