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

// An MCP server's form elicitation, through the real binary: for a client
// that advertises elicitation it reaches the client as elicitation/create
// (valid against the schema, scoped to the session) and the client's
// answer reaches the server; for a client that does not, nothing is sent
// and the server gets a clean decline.
func TestMCPElicitationReachesTheClient(t *testing.T) {
	for _, tt := range []struct {
		name   string
		caps   string
		answer string // the client's reply to elicitation/create; "" none expected
		want   string // what the server reports it got
	}{
		{"form", `{"elicitation":{"form":{}}}`, `{"action":"accept","content":{"colour":"blue"}}`, `answer: accept {\"colour\":\"blue\"}`},
		{"declined by the user", `{"elicitation":{"form":{}}}`, `{"action":"decline"}`, `answer: decline null`},
		{"no elicitation", `{}`, "", `answer: decline null`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			schema, err := acpschema.Default()
			if err != nil {
				t.Fatal(err)
			}
			check := acpschema.NewChecker(schema)
			dir := t.TempDir()
			script := filepath.Join(dir, "script.json")
			os.WriteFile(script, []byte(`{"responses":[
				{"parts":[{"tool_call":{"id":"c1","name":"mcp__tools__ask","arguments":{}}}]},
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
			var elicited []json.RawMessage
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
					}
					if _, isReq := m["method"]; !isReq && string(m["id"]) == id {
						return got
					}
				}
			}
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":%s}}`, tt.caps))
			recvUntil("1")
			env := ""
			for i, kv := range mcptest.Env(mcptest.ModeStdio, filepath.Join(dir, "pids")) {
				k, v, _ := strings.Cut(kv, "=")
				if i > 0 {
					env += ","
				}
				env += fmt.Sprintf(`{"name":%q,"value":%q}`, k, v)
			}
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[{"name":"tools","command":%q,"args":[],"env":[%s]}]}}`, dir, os.Args[0], env))
			msgs := recvUntil("2")
			var sess struct{ SessionID string }
			json.Unmarshal(msgs[len(msgs)-1]["result"], &sess)
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"ask me"}]}}`, sess.SessionID))
			msgs = recvUntil("3")
			if got := string(msgs[len(msgs)-1]["result"]); got != `{"stopReason":"end_turn"}` {
				t.Fatalf("prompt: %s %s", got, msgs[len(msgs)-1]["error"])
			}
			if tt.answer == "" {
				if len(elicited) != 0 {
					t.Errorf("elicitation/create sent to a client that did not advertise elicitation: %s", elicited)
				}
			} else {
				var p struct {
					SessionID, Mode, Message string
					RequestedSchema          map[string]any
				}
				if len(elicited) != 1 || json.Unmarshal(elicited[0], &p) != nil || p.SessionID != sess.SessionID || p.Mode != "form" ||
					p.Message != "Which colour?" || p.RequestedSchema["properties"] == nil {
					t.Errorf("elicitation/create %s, want one form for the session", elicited)
				}
			}
			var result string
			for _, m := range msgs {
				if p := string(m["params"]); strings.Contains(p, `"tool_call_update"`) && strings.Contains(p, `"completed"`) {
					result = p
				}
			}
			if !strings.Contains(result, tt.want) {
				t.Errorf("the server reported %s\nwant %s", result, tt.want)
			}
		})
	}
}
