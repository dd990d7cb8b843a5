package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
	"github.com/acp-bridge/acp-bridge/mcpclient/mcptest"
)

// An MCP server's URL-mode elicitation (mcptest.SignInHTTP: a real MCP
// server, the go-sdk's), through the real binary: a client
// that takes URL elicitations gets elicitation/create with the URL and
// the server's elicitation id (valid against the schema, scoped to the
// session), its answer reaches the server, and the server's completion
// reaches the client as elicitation/complete. For a client that takes
// forms only the bridge does not offer the server URL mode, so the server
// goes another way and nothing reaches the client.
func TestMCPURLElicitation(t *testing.T) {
	for _, tt := range []struct {
		name     string
		caps     string
		answer   string // the client's reply; "" none expected
		want     string // what the server reports
		complete bool   // elicitation/complete reaches the client
	}{
		{"accepted", `{"elicitation":{"form":{},"url":{}}}`, `{"action":"accept"}`, "sign-in: accept", true},
		{"cancelled by the user", `{"elicitation":{"url":{}}}`, `{"action":"cancel"}`, "sign-in: cancel", false},
		{"a client without URL mode", `{"elicitation":{"form":{}}}`, "", "sign-in: the client takes no URL elicitation", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			schema, err := acpschema.Default()
			if err != nil {
				t.Fatal(err)
			}
			check := acpschema.NewChecker(schema)
			srv := mcptest.SignInHTTP()
			// Closed after the bridge (cleanups run last first): Close waits
			// for the bridge's open connection to the server.
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			script := filepath.Join(dir, "script.json")
			os.WriteFile(script, []byte(`{"responses":[
				{"parts":[{"tool_call":{"id":"c1","name":"mcp__auth__sign_in","arguments":{}}}]},
				{"parts":[{"text":"Done."}]}]}`), 0o644)
			b := startBridge(t, "--model", "script:"+script)
			send := func(msg string) {
				t.Helper()
				var buf bytes.Buffer
				json.Compact(&buf, []byte(msg))
				if err := check.Check(acpschema.ToAgent, buf.Bytes()); err != nil {
					t.Errorf("schema (to agent): %v\n%s", err, buf.String())
				}
				b.send(buf.String())
			}
			var elicited, completed []json.RawMessage
			recvUntil := func(id string) []map[string]json.RawMessage {
				t.Helper()
				var got []map[string]json.RawMessage
				for {
					line := b.next()
					if err := check.Check(acpschema.FromAgent, line); err != nil {
						t.Errorf("schema: %v\n%s", err, line)
					}
					var m map[string]json.RawMessage
					json.Unmarshal(line, &m)
					got = append(got, m)
					switch string(m["method"]) {
					case `"session/request_permission"`:
						send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow-once"}}}`, m["id"]))
						continue
					case `"elicitation/create"`:
						elicited = append(elicited, m["params"])
						send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m["id"], tt.answer))
						continue
					case `"elicitation/complete"`:
						completed = append(completed, m["params"])
						continue
					}
					if _, isReq := m["method"]; !isReq && string(m["id"]) == id {
						return got
					}
				}
			}
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":%s}}`, tt.caps))
			recvUntil("1")
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[{"type":"http","name":"auth","url":%q,"headers":[]}]}}`, dir, srv.URL))
			msgs := recvUntil("2")
			var sess struct{ SessionID string }
			json.Unmarshal(msgs[len(msgs)-1]["result"], &sess)
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"sign me in"}]}}`, sess.SessionID))
			msgs = recvUntil("3")
			if got := string(msgs[len(msgs)-1]["result"]); got != `{"stopReason":"end_turn"}` {
				t.Fatalf("prompt: %s %s", got, msgs[len(msgs)-1]["error"])
			}
			if tt.answer == "" {
				if len(elicited) != 0 {
					t.Errorf("elicitation/create sent to a client without URL mode: %s", elicited)
				}
			} else {
				var p struct {
					SessionID, Mode, Message, URL, ElicitationID string
				}
				if len(elicited) != 1 || json.Unmarshal(elicited[0], &p) != nil || p.SessionID != sess.SessionID || p.Mode != "url" ||
					p.URL != mcptest.SignInURL || p.ElicitationID != mcptest.SignInID || p.Message != mcptest.SignInMessage {
					t.Errorf("elicitation/create %s, want one URL elicitation for the session", elicited)
				}
			}
			// The completion travels on its own (an MCP notification relayed
			// as an ACP one): wait for it rather than assume it came first.
			for tt.complete && len(completed) == 0 {
				var m map[string]json.RawMessage
				line := b.next()
				if err := check.Check(acpschema.FromAgent, line); err != nil {
					t.Errorf("schema: %v\n%s", err, line)
				}
				if json.Unmarshal(line, &m); string(m["method"]) == `"elicitation/complete"` {
					completed = append(completed, m["params"])
				}
			}
			wantComplete := 0
			if tt.complete {
				wantComplete = 1
			}
			if len(completed) != wantComplete || (wantComplete == 1 && !strings.Contains(string(completed[0]), `"elicitationId":"el-7"`)) {
				t.Errorf("elicitation/complete %s, want %d for el-7", completed, wantComplete)
			}
			var result string
			for _, m := range msgs {
				if p := string(m["params"]); strings.Contains(p, `"tool_call_update"`) && strings.Contains(p, `"completed"`) {
					result = p
				}
			}
			if !strings.Contains(result, tt.want) {
				for _, m := range msgs {
					t.Logf("%s", m["params"])
				}
				t.Errorf("the server reported %s\nwant %s", result, tt.want)
			}
		})
	}
}
