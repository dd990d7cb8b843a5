package agent

import (
	"context"
	"errors"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
)

func TestLoginMethodsAndLogout(t *testing.T) {
	login := &acp.AuthMethod{ID: "login", Name: "Log in", Type: "terminal", Args: []string{"login"},
		Meta: acp.Meta{"terminal-auth": map[string]any{"command": "/bin/acp-bridge", "args": []string{"login"}}}}
	loggedOut := 0
	logout := func(context.Context) error { loggedOut++; return nil }
	tests := []struct {
		name        string
		opts        Options
		caps        acp.ClientCapabilities
		wantMethods int
		wantLogout  bool
	}{
		{"terminal-capable client", Options{TerminalLogin: login, Logout: logout}, acp.ClientCapabilities{Auth: &acp.ClientAuthCaps{Terminal: true}}, 1, true},
		{"older client with _meta terminal-auth", Options{TerminalLogin: login, Logout: logout}, acp.ClientCapabilities{Meta: acp.Meta{"terminal-auth": true}}, 1, true},
		{"client without terminal auth", Options{TerminalLogin: login, Logout: logout}, acp.ClientCapabilities{}, 0, true},
		{"client saying no", Options{TerminalLogin: login}, acp.ClientCapabilities{Auth: &acp.ClientAuthCaps{}}, 0, false},
		{"nothing configured", Options{}, acp.ClientCapabilities{Auth: &acp.ClientAuthCaps{Terminal: true}}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := New(nil, tt.opts)
			resp, err := a.Initialize(context.Background(), &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: tt.caps})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.AuthMethods) != tt.wantMethods {
				t.Fatalf("authMethods %+v, want %d", resp.AuthMethods, tt.wantMethods)
			}
			if tt.wantMethods == 1 {
				m := resp.AuthMethods[0]
				// The _meta form only for clients of the older convention.
				legacyOnly := tt.caps.Auth == nil || !tt.caps.Auth.Terminal
				if m.Type != "terminal" || m.Args[0] != "login" || (m.Meta["terminal-auth"] != nil) != legacyOnly {
					t.Errorf("method %+v", m)
				}
			}
			if got := resp.AgentCapabilities.Auth.Logout != nil; got != tt.wantLogout {
				t.Errorf("auth.logout advertised: %v, want %v", got, tt.wantLogout)
			}
			before := loggedOut
			_, err = a.Logout(context.Background(), &acp.LogoutRequest{})
			var pe *acp.Error
			switch {
			case tt.wantLogout && (err != nil || loggedOut != before+1):
				t.Errorf("logout: %v, removed %d times", err, loggedOut-before)
			case !tt.wantLogout && (!errors.As(err, &pe) || pe.Code != acp.CodeMethodNotFound):
				t.Errorf("logout without a store: %v, want method not found", err)
			}
		})
	}
}
