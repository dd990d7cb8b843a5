package suite

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEditor drives the emulated editor's answers to agent requests.
func TestEditor(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	cases := []struct {
		name   string
		caps   Caps
		method string
		params string
		want   string // substring of the JSON result, or "error N"
	}{
		{"read whole", ZedCaps, "fs/read_text_file", `{"sessionId":"s","path":"` + ws + `/a.txt"}`, `"content":"one\ntwo\nthree\n"`},
		{"read line and limit", ZedCaps, "fs/read_text_file", `{"sessionId":"s","path":"` + ws + `/a.txt","line":2,"limit":1}`, `"content":"two\n"`},
		{"read past the end", ZedCaps, "fs/read_text_file", `{"sessionId":"s","path":"` + ws + `/a.txt","line":9}`, "error -32602"},
		{"read missing", ZedCaps, "fs/read_text_file", `{"sessionId":"s","path":"` + ws + `/nope"}`, "error -32002"},
		{"read relative", ZedCaps, "fs/read_text_file", `{"sessionId":"s","path":"a.txt"}`, "error -32602"},
		{"read unadvertised", Caps{}, "fs/read_text_file", `{"sessionId":"s","path":"` + ws + `/a.txt"}`, "error -32601"},
		{"write", ZedCaps, "fs/write_text_file", `{"sessionId":"s","path":"` + ws + `/sub/b.txt","content":"x"}`, `{}`},
		{"write outside", ZedCaps, "fs/write_text_file", `{"sessionId":"s","path":"/tmp/acp-conform-outside.txt","content":"x"}`, "error -32002"},
		{"permission picks allow_once", ZedCaps, "session/request_permission",
			`{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[{"optionId":"aa","name":"A","kind":"allow_always"},{"optionId":"ao","name":"B","kind":"allow_once"},{"optionId":"r","name":"R","kind":"reject_once"}]}`,
			`"optionId":"ao"`},
		{"permission without allow", ZedCaps, "session/request_permission",
			`{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[{"optionId":"r","name":"R","kind":"reject_once"}]}`, `"optionId":"r"`},
		{"elicitation declined", ZedCaps, "elicitation/create", `{"sessionId":"s","message":"?","mode":"form","requestedSchema":{}}`, `"action":"decline"`},
		{"extension", ZedCaps, "_vendor/thing", `{}`, "error -32601"},
		{"terminal unadvertised", Caps{}, "terminal/create", `{"sessionId":"s","command":"true"}`, "error -32601"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ed := newEditor(tc.caps, ws)
			res, rerr := ed.serve(t.Context(), &Msg{JSONRPC: "2.0", ID: json.RawMessage("1"), Method: tc.method, Params: json.RawMessage(tc.params)})
			got := ""
			if rerr != nil {
				got = "error " + strings.TrimPrefix(strings.Fields(rerr.Error())[2], "")
				got = strings.TrimSuffix(got, ":")
			} else {
				b, _ := json.Marshal(res)
				got = string(b)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("%s %s: got %s, want %s", tc.method, tc.params, got, tc.want)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(ws, "sub", "b.txt")); err != nil || string(b) != "x" {
		t.Errorf("write left %q, %v", b, err)
	}
}

// TestEditorTerminal runs a real command through terminal/create and the
// methods that follow it.
func TestEditorTerminal(t *testing.T) {
	ws := t.TempDir()
	ed := newEditor(ZedCaps, ws)
	call := func(method, params string) map[string]any {
		t.Helper()
		res, rerr := ed.serve(t.Context(), &Msg{Method: method, Params: json.RawMessage(params)})
		if rerr != nil {
			t.Fatalf("%s: %v", method, rerr)
		}
		b, _ := json.Marshal(res)
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	id := call("terminal/create", `{"sessionId":"s","command":"printf 'abcdef'; pwd; exit 3","outputByteLimit":1000}`)["terminalId"].(string)
	exit := call("terminal/wait_for_exit", `{"sessionId":"s","terminalId":"`+id+`"}`)
	if exit["exitCode"] != float64(3) {
		t.Errorf("wait_for_exit: %v", exit)
	}
	out := call("terminal/output", `{"sessionId":"s","terminalId":"`+id+`"}`)
	if out["output"] != "abcdef"+ws+"\n" || out["truncated"] != false || out["exitStatus"] == nil {
		t.Errorf("output: %v", out)
	}
	call("terminal/release", `{"sessionId":"s","terminalId":"`+id+`"}`)
	if _, rerr := ed.serve(t.Context(), &Msg{Method: "terminal/output", Params: json.RawMessage(`{"terminalId":"` + id + `"}`)}); rerr == nil {
		t.Error("output of a released terminal succeeded")
	}

	// outputByteLimit keeps the end; kill ends a running command.
	id = call("terminal/create", `{"sessionId":"s","command":"printf 0123456789; sleep 30","outputByteLimit":4}`)["terminalId"].(string)
	deadline := time.Now().Add(5 * time.Second)
	for call("terminal/output", `{"sessionId":"s","terminalId":"`+id+`"}`)["output"] != "6789" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	out = call("terminal/output", `{"sessionId":"s","terminalId":"`+id+`"}`)
	if out["output"] != "6789" || out["truncated"] != true {
		t.Errorf("limited output: %v", out)
	}
	call("terminal/kill", `{"sessionId":"s","terminalId":"`+id+`"}`)
	exit = call("terminal/wait_for_exit", `{"sessionId":"s","terminalId":"`+id+`"}`)
	if exit["signal"] == nil {
		t.Errorf("killed terminal: %v", exit)
	}
	ed.term.closeAll()
}
