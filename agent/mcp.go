package agent

import (
	"context"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mcpclient"
	"github.com/acp-bridge/acp-bridge/sandbox"
	"github.com/acp-bridge/acp-bridge/session"
)

// mcpServers is a session's MCP servers; their lifecycle (start, keep on
// resume, stop, their tools in the scope, what the user is told) is
// mcpclient.Servers'. The session adds what is ACP's: the editor's
// configuration, and notices held until the response that names the
// session is out.
type mcpServers struct {
	servers *mcpclient.Servers
	dir     string // the session root, where a project's servers expect to run
	// sandbox is the policy a stdio server starts under (sandbox.go); it
	// keeps it until it is started again.
	sandbox func() *sandbox.Policy
}

func newMCPServers(s *mcpclient.Servers, dir string, noticed func(session.Notice)) *mcpServers {
	s.Notify = func(n mcpclient.Notice) {
		noticed(session.Notice{Text: n.Text, Severity: n.Severity, Title: n.Title, Description: n.Description})
	}
	return &mcpServers{servers: s, dir: dir}
}

// start connects the session to the editor's servers (bounded; see
// mcpclient.Servers.Start) and tells the user about them once the
// response to ctx's request is on the wire.
func (m *mcpServers) start(ctx context.Context, servers []acp.McpServer) {
	cfgs := make([]mcpclient.Server, 0, len(servers))
	for _, s := range servers {
		cfgs = append(cfgs, m.config(s))
	}
	m.servers.Start(ctx, cfgs)
	acp.AfterReply(ctx, m.servers.Announce)
}

func (m *mcpServers) stop() { m.servers.Stop() }

// config translates the editor's configuration; the server runs in the
// session's root, where a project's servers expect to be.
func (m *mcpServers) config(cfg acp.McpServer) mcpclient.Server {
	out := mcpclient.Server{Name: cfg.Name, Type: cfg.Type, Command: cfg.Command, Args: cfg.Args, URL: cfg.URL, Dir: m.dir}
	if m.sandbox != nil {
		out.Sandbox = m.sandbox()
	}
	if out.Type == "" {
		out.Type = mcpclient.Stdio
	}
	for _, e := range cfg.Env {
		out.Env = append(out.Env, mcpclient.EnvVar{Name: e.Name, Value: e.Value})
	}
	for _, h := range cfg.Headers {
		out.Headers = append(out.Headers, mcpclient.Header{Name: h.Name, Value: h.Value})
	}
	return out
}
