package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// answerID is the id an answer to line must carry: the request's own when
// it can be read, else null.
func answerID(line string) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal([]byte(line), &m) != nil || len(m.ID) == 0 {
		return "null"
	}
	switch m.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(m.ID)
	}
	return "null"
}

// noAnswer marks input that must be ignored (notifications, stray responses).
const noAnswer = 1

// TestHostileInput sends hostile lines to the real binary over real stdio.
// Each gets the right answer (or none, where the protocol says so), every
// stdout line stays JSON-RPC, and the process keeps serving: after each
// input a ping must be answered, and a session created before the barrage
// still runs a prompt after it.
func TestHostileInput(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	os.WriteFile(script, []byte(`{"responses":[{"parts":[{"text":"still here"}]},{"parts":[{"text":"big prompt ok"}]}]}`), 0o644)
	b := startBridge(t, "--model", "script:"+script, "--log-level", "error")
	b.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1}}`)
	b.response(`"init"`)
	b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, dir))
	var created struct {
		Result struct{ SessionID string } `json:"result"`
	}
	json.Unmarshal(b.response(`"new"`), &created)
	sid := created.Result.SessionID
	b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"gone","method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, dir))
	var gone struct {
		Result struct{ SessionID string } `json:"result"`
	}
	json.Unmarshal(b.response(`"gone"`), &gone)
	b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"close","method":"session/close","params":{"sessionId":%q}}`, gone.Result.SessionID))
	b.response(`"close"`)

	nested := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	req := func(id, method, params string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params)
	}
	prompt := func(id, params string) string { return req(id, "session/prompt", params) }
	tests := []struct {
		name string
		line string
		want int // error code, 0 for a result, noAnswer for silence
	}{
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"x\":\"\xc3\x28\"}}", -32700},
		{"10 MB of garbage on one line", strings.Repeat("x", 10<<20), -32700},
		{"deeply nested array", nested, -32700},
		{"deeply nested params", req("2", "initialize", strings.Repeat(`{"a":`, 20000)+"1"+strings.Repeat("}", 20000)), -32700},
		{"two messages on one line", req("3", "initialize", `{"protocolVersion":1}`) + req("4", "initialize", `{"protocolVersion":1}`), -32700},
		{"byte order mark", "\ufeff" + req("5", "initialize", `{"protocolVersion":1}`), -32700},
		{"empty object", `{}`, -32600},
		{"missing jsonrpc", `{"id":6,"method":"initialize","params":{"protocolVersion":1}}`, -32600},
		{"id true", req("true", "initialize", `{"protocolVersion":1}`), -32600},
		{"id array", req("[1]", "initialize", `{"protocolVersion":1}`), -32600},
		{"id object", req(`{"a":1}`, "initialize", `{"protocolVersion":1}`), -32600},
		{"id null", req("null", "initialize", `{"protocolVersion":1}`), -32600},
		{"id negative", req("-7", "initialize", `{"protocolVersion":1}`), 0},
		{"id fractional", req("7.25", "initialize", `{"protocolVersion":1}`), 0},
		{"id huge", req("123456789012345678901234567890", "initialize", `{"protocolVersion":1}`), 0},
		{"id empty string", req(`""`, "initialize", `{"protocolVersion":1}`), 0},
		{"empty method", req("8", "", `{}`), -32601},
		{"very long method", req("9", strings.Repeat("m", 100000), `{}`), -32601},
		{"protocolVersion string", req("10", "initialize", `{"protocolVersion":"1"}`), -32602},
		{"protocolVersion huge", req("11", "initialize", `{"protocolVersion":1e400}`), -32602},
		{"protocolVersion negative", req("12", "initialize", `{"protocolVersion":-1}`), -32602},
		{"clientCapabilities array", req("13", "initialize", `{"protocolVersion":1,"clientCapabilities":[]}`), -32602},
		{"cwd number", req("14", "session/new", `{"cwd":5,"mcpServers":[]}`), -32602},
		{"cwd relative", req("15", "session/new", `{"cwd":"../up","mcpServers":[]}`), -32602},
		{"cwd with NUL", req("16", "session/new", `{"cwd":"/tmp/a\u0000b","mcpServers":[]}`), -32602},
		{"mcpServers object", req("17", "session/new", `{"cwd":"/tmp","mcpServers":{}}`), -32602},
		{"mcpServers null", req("18", "session/new", `{"cwd":"/tmp","mcpServers":null}`), -32602},
		{"prompt a string", prompt("19", fmt.Sprintf(`{"sessionId":%q,"prompt":"hi"}`, sid)), -32602},
		{"prompt block text number", prompt("20", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":5}]}`, sid)), -32602},
		{"prompt block without type", prompt("21", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"text":"x"}]}`, sid)), -32602},
		{"prompt empty", prompt("22", fmt.Sprintf(`{"sessionId":%q,"prompt":[]}`, sid)), -32602},
		{"prompt params null", prompt("23", `null`), -32602},
		{"sessionId number", prompt("24", `{"sessionId":5,"prompt":[{"type":"text","text":"x"}]}`), -32602},
		{"prompt for an unknown session", prompt("25", `{"sessionId":"nope","prompt":[{"type":"text","text":"x"}]}`), -32002},
		{"prompt for a closed session", prompt("26", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"x"}]}`, gone.Result.SessionID)), -32002},
		{"close a closed session", req("27", "session/close", fmt.Sprintf(`{"sessionId":%q}`, gone.Result.SessionID)), -32002},
		{"cancel carrying an id", req("28", "session/cancel", fmt.Sprintf(`{"sessionId":%q}`, sid)), -32600},
		{"cancel with a number session", `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":5}}`, noAnswer},
		{"cancel for an unknown session", `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}`, noAnswer},
		{"unknown notification", `{"jsonrpc":"2.0","method":"x/y","params":{}}`, noAnswer},
		{"cancel_request for an unknown id", `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":424242}}`, noAnswer},
		{"cancel_request with bad params", `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":{}}}`, noAnswer},
		{"response to a request never sent", `{"jsonrpc":"2.0","id":31337,"result":{"outcome":{"outcome":"cancelled"}}}`, noAnswer},
		{"error response to a request never sent", `{"jsonrpc":"2.0","id":31338,"error":{"code":-32603,"message":"x"}}`, noAnswer},
		{"unknown fields everywhere", req("29", "initialize", `{"protocolVersion":1,"zzz":{"deep":[1,2]},"_meta":{"a":1}}`), 0},
		{"authenticate with no methods", req("30", "authenticate", `{"methodId":"x"}`), -32602},
		{"load of a session never saved", req("31", "session/load", `{"sessionId":"a","cwd":"/tmp","mcpServers":[]}`), -32002},
		{"load with a path for an id", req("32", "session/load", `{"sessionId":"../../etc/passwd","cwd":"/tmp","mcpServers":[]}`), -32002},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d hostile inputs", len(tests))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.t = t
			b.send(tt.line)
			ping := fmt.Sprintf(`"ping-%d"`, i)
			b.send(req(ping, "initialize", `{"protocolVersion":1}`))
			// Requests run concurrently, so the answer and the ping's may come
			// in either order; anything else is a stray message.
			wantID := answerID(tt.line)
			if tt.want == -32700 {
				wantID = "null" // a line that does not parse has no id to echo
			}
			gotAnswer, gotPing := tt.want == noAnswer, false
			for !gotAnswer || !gotPing {
				line := b.next()
				var m struct {
					ID     json.RawMessage     `json:"id"`
					Method string              `json:"method"`
					Error  *struct{ Code int } `json:"error"`
				}
				if err := json.Unmarshal(line, &m); err != nil {
					t.Fatalf("stdout line is not JSON: %.200q", line)
				}
				switch {
				case m.Method == "session/update" && strings.Contains(string(line), `"available_commands_update"`):
					// The command list of the sessions made above is sent after
					// their responses, so it may land inside the first cases.
					continue
				case string(m.ID) == ping:
					gotPing = true
				case tt.want != noAnswer && !gotAnswer && string(m.ID) == wantID:
					gotAnswer = true
					if tt.want == 0 && m.Error != nil || tt.want != 0 && (m.Error == nil || m.Error.Code != tt.want) {
						t.Fatalf("want %d (0: a result), got %.300s", tt.want, line)
					}
				default:
					t.Fatalf("unexpected message (want id %s): %.300s", wantID, line)
				}
			}
		})
	}
	b.t = t
	b.send(prompt(`"alive"`, fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"are you there?"}]}`, sid)))
	for {
		line := b.next()
		if strings.Contains(string(line), `"id":"alive"`) {
			if !strings.Contains(string(line), `"end_turn"`) {
				t.Fatalf("prompt after the barrage: %s", line)
			}
			break
		}
	}
	// A 10 MB prompt is a legitimate message: it is served. Slowly under
	// -race on a busy machine (over a minute at load 20): the bound is
	// only there to fail rather than hang.
	b.wait = 5 * time.Minute
	big := strings.Repeat("word ", 2<<20)
	sent := time.Now()
	b.send(prompt(`"big"`, fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}`, sid, big)))
	for {
		line := b.next()
		if strings.Contains(string(line), `"id":"big"`) {
			if !strings.Contains(string(line), `"end_turn"`) {
				t.Fatalf("10 MB prompt: %.300s", line)
			}
			break
		}
	}
	t.Logf("10 MB prompt answered in %v", time.Since(sent).Round(time.Millisecond))
}
