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

// checkedClient drives a bridge over its real stdio with raw JSON-RPC
// lines, every line both ways checked against the schema. On the way to a
// response it answers permission requests with allow-once and
// elicitation/create with elicitAnswer, and keeps the elicitations and
// elicitation/complete notifications it was sent.
type checkedClient struct {
	t            *testing.T
	b            *bridge
	check        *acpschema.Checker
	elicitAnswer string
	elicited     []json.RawMessage // params of each elicitation/create
	completed    []json.RawMessage // params of each elicitation/complete
}

func newCheckedClient(t *testing.T, b *bridge) *checkedClient {
	t.Helper()
	schema, err := acpschema.Default()
	if err != nil {
		t.Fatal(err)
	}
	return &checkedClient{t: t, b: b, check: acpschema.NewChecker(schema)}
}

// send writes one message as one line.
func (c *checkedClient) send(msg string) {
	c.t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(msg)); err != nil {
		c.t.Fatalf("bad test message: %v", err)
	}
	if err := c.check.Check(acpschema.ToAgent, buf.Bytes()); err != nil {
		c.t.Errorf("schema (to agent): %v\n%s", err, buf.String())
	}
	c.b.send(buf.String())
}

// recv reads one message, answering it if it is a request the client
// serves.
func (c *checkedClient) recv() map[string]json.RawMessage {
	c.t.Helper()
	line := c.b.next()
	if err := c.check.Check(acpschema.FromAgent, line); err != nil {
		c.t.Errorf("schema: %v\n%s", err, line)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Fatalf("stdout line is not JSON: %q", line)
	}
	switch string(m["method"]) {
	case `"session/request_permission"`:
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow-once"}}}`, m["id"]))
	case `"elicitation/create"`:
		c.elicited = append(c.elicited, m["params"])
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m["id"], c.elicitAnswer))
	case `"elicitation/complete"`:
		c.completed = append(c.completed, m["params"])
	}
	return m
}

// recvUntil reads until the response with id and returns every message
// read, that response last.
func (c *checkedClient) recvUntil(id string) []map[string]json.RawMessage {
	c.t.Helper()
	var got []map[string]json.RawMessage
	for {
		m := c.recv()
		got = append(got, m)
		if _, isReq := m["method"]; !isReq && string(m["id"]) == id {
			return got
		}
	}
}

// elicitTurn is the set-up of the elicitation tests: a bridge whose
// scripted model calls tool once and then ends the turn, a client that
// advertises caps and answers elicitations with answer, a session with the
// MCP servers mcpServers (a JSON list, given the session's directory) and
// one prompt, which must end end_turn. It returns the client, the
// session's id and the prompt's messages.
func elicitTurn(t *testing.T, caps, answer, tool string, mcpServers func(dir string) string) (*checkedClient, string, []map[string]json.RawMessage) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(`{"responses":[
		{"parts":[{"tool_call":{"id":"c1","name":%q,"arguments":{}}}]},
		{"parts":[{"text":"Done."}]}]}`, tool)), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCheckedClient(t, startBridge(t, "--model", "script:"+script))
	c.elicitAnswer = answer
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":%s}}`, caps))
	c.recvUntil("1")
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":%s}}`, dir, mcpServers(dir)))
	msgs := c.recvUntil("2")
	var sess struct{ SessionID string }
	if err := json.Unmarshal(msgs[len(msgs)-1]["result"], &sess); err != nil || sess.SessionID == "" {
		t.Fatalf("session/new: %s", msgs[len(msgs)-1]["error"])
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go on"}]}}`, sess.SessionID))
	msgs = c.recvUntil("3")
	if got := string(msgs[len(msgs)-1]["result"]); got != `{"stopReason":"end_turn"}` {
		t.Fatalf("prompt: %s %s", got, msgs[len(msgs)-1]["error"])
	}
	return c, sess.SessionID, msgs
}

// completedCall is the params of the last session/update of msgs that
// completes a tool call: where the MCP server's answer shows.
func completedCall(msgs []map[string]json.RawMessage) string {
	var result string
	for _, m := range msgs {
		if p := string(m["params"]); strings.Contains(p, `"tool_call_update"`) && strings.Contains(p, `"completed"`) {
			result = p
		}
	}
	return result
}

// stdioServer is the mcpServers entry of a stdio MCP server named
// "tools": this test binary in the mode given (mcptest.Env), keeping its
// pids in dir/pids.
func stdioServer(mode, dir string) string {
	env := ""
	for i, kv := range mcptest.Env(mode, filepath.Join(dir, "pids")) {
		k, v, _ := strings.Cut(kv, "=")
		if i > 0 {
			env += ","
		}
		env += fmt.Sprintf(`{"name":%q,"value":%q}`, k, v)
	}
	return fmt.Sprintf(`{"name":"tools","command":%q,"args":[],"env":[%s]}`, os.Args[0], env)
}

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
			c, sid, msgs := elicitTurn(t, tt.caps, tt.answer, "mcp__tools__ask", func(dir string) string {
				return "[" + stdioServer(mcptest.ModeStdio, dir) + "]"
			})
			if tt.answer == "" {
				if len(c.elicited) != 0 {
					t.Errorf("elicitation/create sent to a client that did not advertise elicitation: %s", c.elicited)
				}
			} else {
				var p struct {
					SessionID, Mode, Message string
					RequestedSchema          map[string]any
				}
				if len(c.elicited) != 1 || json.Unmarshal(c.elicited[0], &p) != nil || p.SessionID != sid || p.Mode != "form" ||
					p.Message != "Which colour?" || p.RequestedSchema["properties"] == nil {
					t.Errorf("elicitation/create %s, want one form for the session", c.elicited)
				}
			}
			if result := completedCall(msgs); !strings.Contains(result, tt.want) {
				t.Errorf("the server reported %s\nwant %s", result, tt.want)
			}
		})
	}
}
