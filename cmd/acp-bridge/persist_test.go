package main

import "testing"

// A session that was never prompted outlives the process that made it: a
// fresh acp-bridge on the same state directory loads it with the mode
// picked before. It is not listed (a chat opened and never used;
// TestBinaryUnusedChatsNotListed).
func TestBinaryUnpromptedSessionOutlivesTheProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	state, cwd := t.TempDir(), t.TempDir()
	first := startE2E(t, nil, "--state-dir", state)
	id, _ := first.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})["sessionId"].(string)
	if id == "" {
		t.Fatal("session/new gave no session id")
	}
	first.call("session/set_mode", map[string]any{"sessionId": id, "modeId": "plan"})
	first.call("session/close", map[string]any{"sessionId": id})

	second := startE2E(t, nil, "--state-dir", state)
	list, _ := second.call("session/list", map[string]any{})["sessions"].([]any)
	if len(list) != 0 {
		t.Errorf("session/list in a new process = %v, want no unprompted session", list)
	}
	loaded := second.call("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}})
	modes, _ := loaded["modes"].(map[string]any)
	if modes["currentModeId"] != "plan" {
		t.Errorf("loaded with modes %v, want plan current", modes)
	}
}
