package agent

import (
	"context"

	"github.com/acp-bridge/acp-bridge/acp"
)

var _ acp.LoggerOuter = (*Agent)(nil)

// authMethods are the login methods this client can use. A terminal method
// (the client runs our own binary with its args in a terminal, then starts us
// again) is offered only to a client that says it can run one: with
// clientCapabilities.auth.terminal, or with the older
// _meta["terminal-auth"] that Zed and the ACP Registry's checker send.
func (o *Options) authMethods(caps acp.ClientCapabilities) []acp.AuthMethod {
	methods := []acp.AuthMethod{}
	legacy, _ := caps.Meta["terminal-auth"].(bool)
	current := caps.Auth != nil && caps.Auth.Terminal
	if o.TerminalLogin == nil || !legacy && !current {
		return methods
	}
	m := *o.TerminalLogin
	if current {
		// The first-class method says it all; the _meta form (with the
		// command's local path) is only for clients that need it.
		m.Meta = nil
	}
	return append(methods, m)
}

// Logout forgets the stored credentials (Options.Logout). The sessions of
// this process keep the key they started with; the next process has none.
func (a *Agent) Logout(ctx context.Context, _ *acp.LogoutRequest) (*acp.LogoutResponse, error) {
	if a.o.Logout == nil {
		return nil, acp.Errorf(acp.CodeMethodNotFound, "method not supported by this agent")
	}
	if err := a.o.Logout(ctx); err != nil {
		return nil, acp.Errorf(acp.CodeInternalError, "logout failed: %v", err)
	}
	return &acp.LogoutResponse{}, nil
}
