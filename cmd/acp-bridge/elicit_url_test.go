package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

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
			srv := mcptest.SignInHTTP()
			// Closed after the bridge (cleanups run last first): Close waits
			// for the bridge's open connection to the server.
			t.Cleanup(srv.Close)
			c, sid, msgs := elicitTurn(t, tt.caps, tt.answer, "mcp__auth__sign_in", func(string) string {
				return fmt.Sprintf(`[{"type":"http","name":"auth","url":%q,"headers":[]}]`, srv.URL)
			})
			if tt.answer == "" {
				if len(c.elicited) != 0 {
					t.Errorf("elicitation/create sent to a client without URL mode: %s", c.elicited)
				}
			} else {
				var p struct {
					SessionID, Mode, Message, URL, ElicitationID string
				}
				if len(c.elicited) != 1 || json.Unmarshal(c.elicited[0], &p) != nil || p.SessionID != sid || p.Mode != "url" ||
					p.URL != mcptest.SignInURL || p.ElicitationID != mcptest.SignInID || p.Message != mcptest.SignInMessage {
					t.Errorf("elicitation/create %s, want one URL elicitation for the session", c.elicited)
				}
			}
			// The completion travels on its own (an MCP notification relayed
			// as an ACP one): wait for it rather than assume it came first.
			for tt.complete && len(c.completed) == 0 {
				c.recv()
			}
			wantComplete := 0
			if tt.complete {
				wantComplete = 1
			}
			if len(c.completed) != wantComplete || (wantComplete == 1 && !strings.Contains(string(c.completed[0]), `"elicitationId":"el-7"`)) {
				t.Errorf("elicitation/complete %s, want %d for el-7", c.completed, wantComplete)
			}
			if result := completedCall(msgs); !strings.Contains(result, tt.want) {
				for _, m := range msgs {
					t.Logf("%s", m["params"])
				}
				t.Errorf("the server reported %s\nwant %s", result, tt.want)
			}
		})
	}
}
