//go:build unix

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestBinarySubCallOutputCoalesced: a command that writes 500 small chunks
// gives no more tool_call_updates as a Code Mode sub-call than as a native
// bash call, through the real binary, for a client with Zed's terminal
// and for one without (the console fallback re-sends the whole block per
// update, the worst case). One recorder logs, coalesces and closes both
// (agent/calls.go); before it, the sub-call sent one update per write.
func TestBinarySubCallOutputCoalesced(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// A 2 ms pause between writes (read's timeout on an empty pipe, no
	// process started) keeps them apart: each reaches the bridge alone.
	const command = `exec 3<> <(:); for i in $(seq 500); do printf x; read -t 0.002 -u 3; done; true`
	bash := fmt.Sprintf(`{"command":%q,"description":"write 500 chunks"}`, command)
	code := fmt.Sprintf(`await tools.bash(%s); return "ran"`, bash)
	for _, tt := range []struct {
		name string
		caps map[string]any
	}{
		{"console fallback", map[string]any{}},
		{"zed terminal", map[string]any{"_meta": map[string]any{"terminal_output": true}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			script := writeScript(t, dir, "script.json",
				`{"parts":[{"tool_call":{"id":"native","name":"bash","arguments":`+bash+`}}]}`,
				`{"parts":[{"text":"native done"}]}`,
				fmt.Sprintf(`{"parts":[{"tool_call":{"id":"prog","name":"run_code","arguments":{"code":%q,"description":"write 500 chunks"}}}]}`, code),
				`{"parts":[{"text":"code done"}]}`)
			stdin, sc := startBinary(t, nil, "--model", "script:"+script, "--tools-mode", "both", "--log-level", "error")
			c := &rpcClient{t: t, in: stdin, out: sc}
			c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": tt.caps})
			sid := c.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})["sessionId"].(string)

			// Each prompt runs one call; its wall time bounds the command's.
			count := func(id string, text string) (n int, wall time.Duration) {
				t.Helper()
				start := time.Now()
				res := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
				wall = time.Since(start)
				if res["stopReason"] != "end_turn" {
					t.Fatalf("%s: stopReason = %v", text, res["stopReason"])
				}
				final := false
				for _, u := range c.updates("tool_call_update") {
					if u["toolCallId"] == id {
						n++
						final = final || u["status"] == "completed"
					}
				}
				if !final {
					t.Fatalf("%s: call %s never completed; updates %v", text, id, c.updates("tool_call_update"))
				}
				return n, wall
			}
			native, _ := count("native", "run it natively")
			sub, wall := count("prog:code:1", "run it in a program")
			t.Logf("tool_call_updates: native bash %d, Code Mode sub-call %d (sub-call turn took %v)", native, sub, wall)
			if strings.Contains(c.agentText(), "failed") {
				t.Errorf("agent text: %s", c.agentText())
			}
			// The coalescer sends at most one output update per 50 ms plus
			// the final flush; the status and the final update come on top.
			// Two runs of a command never take exactly the same time, so a
			// sub-call may exceed the native count only within that bound.
			if bound := 4 + int(wall/(50*time.Millisecond)); sub > native && sub > bound {
				t.Errorf("the sub-call sent %d tool_call_updates, the native call %d (bound for %v: %d)", sub, native, wall, bound)
			}
		})
	}
}

// TestBinaryCancelledCallInCodeModeAbortsFirst: in code mode, a call the
// model made directly to a tool other than run_code, reached after the
// user cancelled the turn, is ABORTED_BEFORE_DISPATCH as every cancelled
// call is, before the mode is asked whether it may be called directly (the
// seed's order: cancellation first, then the code-mode rejection). The
// turn is cancelled while the program's bash call waits for permission.
func TestBinaryCancelledCallInCodeModeAbortsFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	code := `await tools.bash({"command":"true","description":"nothing"}); return "ran"`
	script := writeScript(t, dir, "script.json",
		fmt.Sprintf(`{"parts":[{"tool_call":{"id":"prog","name":"run_code","arguments":{"code":%q,"description":"run nothing"}}},`+
			`{"tool_call":{"id":"direct","name":"read","arguments":{"file_path":"x.txt"}}}]}`, code),
		`{"parts":[{"text":"never asked"}]}`)
	stdin, sc := startBinary(t, nil, "--model", "script:"+script, "--tools-mode", "code", "--log-level", "error")
	c := &rpcClient{t: t, in: stdin, out: sc}
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	sid := c.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})["sessionId"].(string)
	c.answer = func(map[string]any) string {
		// The user cancels the turn instead of answering.
		c.send(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
		return "reject-once"
	}
	res := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
	if res["stopReason"] != "cancelled" {
		t.Fatalf("stopReason = %v", res["stopReason"])
	}
	if len(c.perms) != 1 {
		t.Fatalf("%d permission requests, want 1 (the program's bash)", len(c.perms))
	}
	var final map[string]any
	for _, u := range c.updates("tool_call_update") {
		if u["toolCallId"] == "direct" && (u["status"] == "failed" || u["status"] == "completed") {
			final = u
		}
	}
	if final == nil {
		t.Fatalf("the direct call never ended; updates %v", c.updates("tool_call_update"))
	}
	got := rawText(final)
	if final["status"] != "failed" || !strings.Contains(got, "aborted before dispatch") {
		t.Errorf("the direct call ended %v with %q; want failed, aborted before dispatch", final["status"], got)
	}
}
