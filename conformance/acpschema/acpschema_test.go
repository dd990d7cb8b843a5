package acpschema

import (
	"errors"
	"strings"
	"testing"
)

func TestChecker(t *testing.T) {
	s, err := Default()
	if err != nil {
		t.Skipf("no ACP schema: %v", err)
	}
	type line struct {
		dir  Direction
		msg  string
		want string // "" valid; else a substring of the error
	}
	cases := []struct {
		name  string
		lines []line
	}{
		{"initialize round trip", []line{
			{ToAgent, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, ""},
			{FromAgent, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`, ""},
		}},
		{"result of the wrong type", []line{
			{ToAgent, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`, ""},
			{FromAgent, `{"jsonrpc":"2.0","id":1,"result":{"session":"x"}}`, "NewSessionResponse"},
		}},
		{"tool_call without a title", []line{
			{FromAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"a"}}}`, "SessionNotification"},
		}},
		{"a client method called by the client", []line{
			{ToAgent, `{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}`, "a method the client serves"},
		}},
		{"notification with an id", []line{
			{ToAgent, `{"jsonrpc":"2.0","id":3,"method":"session/cancel","params":{"sessionId":"s"}}`, "carries an id"},
		}},
		{"request without an id", []line{
			{ToAgent, `{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`, "has no id"},
		}},
		{"unknown plain method, free extension", []line{
			{ToAgent, `{"jsonrpc":"2.0","id":4,"method":"no/such","params":{}}`, "not in the schema"},
			{ToAgent, `{"jsonrpc":"2.0","id":5,"method":"_x/y","params":{"anything":1}}`, ""},
		}},
		{"response to nothing", []line{
			{FromAgent, `{"jsonrpc":"2.0","id":9,"result":{}}`, "never sent"},
		}},
		{"error object", []line{
			{ToAgent, `{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"r","mcpServers":[]}}`, ""},
			{FromAgent, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"cwd"}}`, ""},
			{FromAgent, `{"jsonrpc":"2.0","id":7,"error":{"message":"no code"}}`, "Error"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker(s)
			for i, l := range tc.lines {
				err := c.Check(l.dir, []byte(l.msg))
				switch {
				case l.want == "" && err != nil:
					t.Errorf("line %d: %v", i+1, err)
				case l.want != "" && (err == nil || !strings.Contains(err.Error(), l.want)):
					t.Errorf("line %d: error %v, want one containing %q", i+1, err, l.want)
				}
			}
		})
	}
	if err := NewChecker(s).Check(FromAgent, []byte("hello")); !errors.Is(err, ErrNotJSONRPC) {
		t.Errorf("non-JSON: %v", err)
	}
}
