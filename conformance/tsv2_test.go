package conformance_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/conformance"
	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
	"github.com/acp-bridge/acp-bridge/conformance/v2walk"
)

// tsV2Seen is what v2client.mjs reports.
type tsV2Seen struct {
	tsReport
	Updates     []map[string]any `json:"updates"`
	Permissions []map[string]any `json:"permissions"`
	Before      int              `json:"before"`
	AtResume    int              `json:"atResume"`
}

// TestTypeScriptV2Client drives the real binary with the official
// TypeScript SDK's experimental ACP v2 client: a prompt whose command asks
// permission and shows in a display terminal, a prompt cancelled while its
// command runs, list and close; then a NEW process resumes the session from
// the replay cursor the first one gave. The SDK checks every answer's shape
// itself (zod); every message both ways is also checked against the v2
// schema the SDK ships. Skipped without node and npm, or when the SDK
// cannot be installed.
func TestTypeScriptV2Client(t *testing.T) {
	c := newTSClient(t)
	conformance.SkipUnlessConfined(t, c.bin)
	schema := c.sdkSchema("v2/schema.unstable.json")
	work, state := t.TempDir(), t.TempDir()
	model := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(model, []byte(v2walk.Model), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, scenario map[string]any) *tsV2Seen {
		t.Helper()
		scenario["cwd"] = work
		var seen tsV2Seen
		c.run(tsRun{Script: "v2client.mjs", Name: name, Scenario: scenario, Strict: true,
			Args: []string{"--model", "script:" + model}, Env: []string{"ACP_BRIDGE_STATE_DIR=" + state},
			Schemas: []*acpschema.Schema{schema}}, &seen)
		return &seen
	}

	first := run("first", map[string]any{"phase": "first"})
	if t.Failed() {
		return
	}
	kinds := map[string]int{}
	var output strings.Builder
	var cursor any
	for _, u := range first.Updates {
		k := fmt.Sprint(u["sessionUpdate"])
		if k == "state_update" {
			k += " " + fmt.Sprint(u["state"])
			if u["state"] == "idle" && u["stopReason"] == "end_turn" {
				m, _ := u["_meta"].(map[string]any)
				cursor = m["replayFrom"]
			}
		}
		kinds[k]++
		if u["sessionUpdate"] == "terminal_output_chunk" && u["terminalId"] == "c1" {
			d, _ := base64.StdEncoding.DecodeString(fmt.Sprint(u["data"]))
			output.Write(d)
		}
	}
	for _, k := range []string{"user_message", "state_update running", "state_update requires_action", "state_update idle",
		"terminal_update", "terminal_output_chunk", "tool_call_update", "agent_message_chunk"} {
		if kinds[k] == 0 {
			t.Errorf("no %s among %v", k, kinds)
		}
	}
	if output.String() != "one\ntwo\n" {
		t.Errorf("terminal output %q", output.String())
	}
	if len(first.Permissions) != 2 || first.Permissions[0]["subject"] == nil {
		t.Errorf("permission requests: %v", first.Permissions)
	}
	if ss, _ := first.Responses["list"]["sessions"].([]any); len(ss) != 1 {
		t.Errorf("session/list: %v", first.Responses["list"])
	}
	sid := first.Responses["new"]["sessionId"]
	if cursor == nil || sid == nil {
		t.Fatalf("cursor %v, session %v", cursor, sid)
	}

	second := run("resume", map[string]any{"phase": "resume", "sessionId": sid, "cursor": cursor})
	replayed := second.Updates[second.Before:second.AtResume]
	var convo []map[string]any
	for _, u := range replayed {
		switch u["sessionUpdate"] {
		case "available_commands_update", "usage_update", "session_info_update", "config_option_update":
			continue
		}
		convo = append(convo, u)
	}
	if len(convo) < 2 || convo[0]["sessionUpdate"] != "user_message" || convo[0]["messageId"] != first.Responses["prompt2"]["messageId"] {
		t.Fatalf("the replay from the cursor (before the answer) is %v", convo)
	}
	if last := convo[len(convo)-1]; last["sessionUpdate"] != "state_update" || last["state"] != "idle" || last["stopReason"] != "cancelled" {
		t.Errorf("the resume's last update before its answer is %v, want the idle snapshot", last)
	}
}
