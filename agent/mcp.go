package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mcpclient"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// defaultMCPStartTimeout bounds how long session/new (load, resume) waits
// for the session's MCP servers. A slower server keeps starting in the
// background and its tools appear when it is ready.
const defaultMCPStartTimeout = 5 * time.Second

// mcpServers is a session's MCP servers: the editor's configuration, their
// connections, and the tools they put in the session's scope. It knows the
// session only through what it is given: the scope, where the servers run,
// and how to tell the user something.
type mcpServers struct {
	scope   *registry.Scope
	dir     string // the session root, where a project's servers expect to run
	log     *slog.Logger
	client  [2]string     // name and version, as the servers see this client
	bound   time.Duration // how long start waits
	noticed func(n session.Notice)
	// elicit asks the user what a server asks (elicit.go); elicitURL: the
	// editor takes URL elicitations, complete says one is done.
	elicit    func(ctx context.Context, e mcpclient.Elicitation) (mcpclient.ElicitAnswer, error)
	elicitURL bool
	complete  func(id string)

	mu      sync.Mutex
	servers map[string]*mcpServer // by the editor's name
	// announced: the editor knows the session (the response that names it
	// has been written), so notices may be sent; until then they wait.
	announced bool
	pending   []session.Notice
	closed    bool
}

// mcpServer is one configured server, connecting, connected or gone.
type mcpServer struct {
	cfg     acp.McpServer
	key     string          // the configuration, to tell a changed server on resume
	ctx     context.Context // the connection attempt's; cancelled by a stop
	cancel  context.CancelFunc
	settled chan struct{} // closed when the connection attempt has ended

	mu      sync.Mutex
	conn    *mcpclient.Conn
	unreg   []func() // its tools' registrations in the session scope
	late    bool     // still starting when the session was answered
	stopped bool     // stopped by us: closed session, or dropped on resume
	dead    bool     // ended on its own
}

// startMCP connects the session to servers, in parallel, and returns when
// all have connected or failed, or after the start bound, whichever is
// first. Failures are logged and told to the user (after the response to
// ctx's request, when the editor knows the session); they never fail the
// request. Called again (session/load, session/resume), it keeps servers
// whose configuration is unchanged, stops those no longer given and starts
// the new ones.
func (m *mcpServers) start(ctx context.Context, servers []acp.McpServer) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.announced = false
	if m.servers == nil {
		m.servers = map[string]*mcpServer{}
	}
	want := map[string]string{}
	var dups []string
	var order []acp.McpServer
	for _, cfg := range servers {
		if _, dup := want[cfg.Name]; dup {
			dups = append(dups, cfg.Name)
			continue
		}
		want[cfg.Name] = configKey(cfg)
		order = append(order, cfg)
	}
	var stale, fresh []*mcpServer
	for name, srv := range m.servers {
		if want[name] != srv.key {
			stale = append(stale, srv)
			delete(m.servers, name)
		}
	}
	for _, cfg := range order {
		if m.servers[cfg.Name] != nil {
			continue // running with this very configuration
		}
		srv := &mcpServer{cfg: cfg, key: want[cfg.Name], settled: make(chan struct{})}
		// The cancel exists before the server is visible: a stop may come
		// from another goroutine at once.
		srv.ctx, srv.cancel = context.WithCancel(context.Background())
		m.servers[cfg.Name] = srv
		fresh = append(fresh, srv)
	}
	m.mu.Unlock()

	stopMCPServers(stale)
	for _, name := range dups {
		m.log.Warn("MCP server given twice; the first wins", "mcpServer", name)
		m.notice(fmt.Sprintf("MCP server %q is configured twice; only the first configuration is used.", name),
			acp.NoticeWarning, fmt.Sprintf("MCP server %q is configured twice", name), "Only the first configuration is used.")
	}
	for _, srv := range fresh {
		go m.run(srv.ctx, srv)
	}

	bound := m.bound
	if bound <= 0 {
		bound = defaultMCPStartTimeout
	}
	timer := time.NewTimer(bound)
	defer timer.Stop()
wait:
	for _, srv := range fresh {
		select {
		case <-srv.settled:
		case <-timer.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	for _, srv := range fresh {
		select {
		case <-srv.settled:
			continue
		default:
		}
		srv.mu.Lock()
		srv.late = true
		srv.mu.Unlock()
		m.log.Info("MCP server still starting; going on without it for now", "mcpServer", srv.cfg.Name, "waited", bound)
		m.notice(fmt.Sprintf("MCP server %q is still starting; its tools will be available once it is ready.", srv.cfg.Name),
			acp.NoticeInfo, fmt.Sprintf("MCP server %q is still starting", srv.cfg.Name), "Its tools will be available once it is ready.")
	}
	acp.AfterReply(ctx, m.announce)
}

func configKey(cfg acp.McpServer) string {
	b, _ := json.Marshal(cfg)
	return string(b)
}

// run connects one server and puts its tools in the session's scope.
func (m *mcpServers) run(ctx context.Context, srv *mcpServer) {
	defer close(srv.settled)
	if ctx.Err() != nil {
		return // stopped before it started
	}
	name := srv.cfg.Name
	log := m.log.With("mcpServer", name)
	conn, err := mcpclient.Connect(ctx, m.config(srv.cfg), &mcpclient.Options{
		Logger:         log,
		ClientName:     m.client[0],
		ClientVersion:  m.client[1],
		OnToolsChanged: func(c *mcpclient.Conn) { m.tools(srv, c, true) },
		OnExit:         func(_ *mcpclient.Conn, err error) { m.exited(srv, err) },
		Elicit:         m.elicit,
		ElicitURL:      m.elicitURL,
		ElicitComplete: m.complete,
	})
	if err != nil {
		if ctx.Err() != nil {
			log.Debug("MCP server start abandoned", "err", err)
			return
		}
		// The notice tells the user; a warning on stderr would say it
		// twice in a client that shows stderr as errors (acp.el).
		log.Info("MCP server failed to start", "err", err)
		m.notice(fmt.Sprintf("MCP server %q failed to start: %v. The session goes on without its tools.", name, err),
			acp.NoticeError, fmt.Sprintf("MCP server %q failed to start", name), fmt.Sprintf("%v. The session goes on without its tools.", err))
		return
	}
	srv.mu.Lock()
	if srv.stopped {
		srv.mu.Unlock()
		conn.Close()
		return
	}
	srv.conn = conn
	late := srv.late
	srv.mu.Unlock()
	n := m.tools(srv, conn, false)
	log.Info("MCP server connected", "type", srv.cfg.Type, "tools", n)
	if late {
		m.notice(fmt.Sprintf("MCP server %q is ready (%d tools).", name, n),
			acp.NoticeInfo, fmt.Sprintf("MCP server %q is ready", name), fmt.Sprintf("%d tools.", n))
	}
}

// config translates the editor's configuration; the server runs in the
// session's root, where a project's servers expect to be.
func (m *mcpServers) config(cfg acp.McpServer) mcpclient.Server {
	out := mcpclient.Server{Name: cfg.Name, Type: cfg.Type, Command: cfg.Command, Args: cfg.Args, URL: cfg.URL, Dir: m.dir}
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

// tools replaces the server's tools in the session's scope with its
// current ones; the next model request sees them. It returns how many.
func (m *mcpServers) tools(srv *mcpServer, c *mcpclient.Conn, changed bool) int {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.stopped || srv.dead {
		return 0
	}
	for _, u := range srv.unreg {
		u()
	}
	srv.unreg = nil
	for _, d := range c.Tools() {
		u, err := m.scope.Register(d)
		if err != nil {
			// Two servers whose names differ only in characters that tool
			// names cannot hold: the first keeps the name.
			m.log.Warn("MCP tool not registered", "mcpServer", srv.cfg.Name, "tool", d.Name, "err", err)
			continue
		}
		srv.unreg = append(srv.unreg, u)
	}
	if changed {
		m.log.Info("MCP server tools updated", "mcpServer", srv.cfg.Name, "tools", len(srv.unreg))
	}
	return len(srv.unreg)
}

// exited handles a server that died or hung up: its tools go, and the
// user is told.
func (m *mcpServers) exited(srv *mcpServer, err error) {
	srv.mu.Lock()
	if srv.stopped {
		srv.mu.Unlock()
		return
	}
	srv.dead = true
	for _, u := range srv.unreg {
		u()
	}
	srv.unreg = nil
	srv.mu.Unlock()
	m.log.Info("MCP server stopped", "mcpServer", srv.cfg.Name, "err", err) // and the notice says so
	m.notice(fmt.Sprintf("MCP server %q stopped: %v. Its tools are no longer available.", srv.cfg.Name, err),
		acp.NoticeError, fmt.Sprintf("MCP server %q stopped", srv.cfg.Name), fmt.Sprintf("%v. Its tools are no longer available.", err))
}

// notice tells the user something about the session's servers, now if
// the editor knows the session, else once it does.
// text is how it reads as agent text; severity, title and desc as a notice
// (for clients that take them).
func (m *mcpServers) notice(text, severity, title, desc string) {
	n := session.Notice{Text: "\n\n[" + text + "]\n\n", Severity: severity, Title: title, Description: desc}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	if !m.announced {
		m.pending = append(m.pending, n)
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	m.noticed(n)
}

// announce runs once the editor knows the session: queued notices go out.
func (m *mcpServers) announce() {
	m.mu.Lock()
	m.announced = true
	pending := m.pending
	m.pending = nil
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return
	}
	for _, n := range pending {
		m.noticed(n)
	}
}

// stop stops every server of the session and waits until they are gone.
// The session will start no more.
func (m *mcpServers) stop() {
	m.mu.Lock()
	m.closed = true
	var all []*mcpServer
	for _, srv := range m.servers {
		all = append(all, srv)
	}
	m.servers = nil
	m.pending = nil
	m.mu.Unlock()
	stopMCPServers(all)
}

// stopMCPServers stops servers in parallel: each may take its grace steps.
func stopMCPServers(servers []*mcpServer) {
	var wg sync.WaitGroup
	for _, srv := range servers {
		wg.Go(func() {
			srv.mu.Lock()
			srv.stopped = true
			for _, u := range srv.unreg {
				u()
			}
			srv.unreg = nil
			srv.mu.Unlock()
			srv.cancel()
			<-srv.settled // a start in flight ends (and cleans up) first
			srv.mu.Lock()
			conn := srv.conn
			srv.mu.Unlock()
			if conn != nil {
				conn.Close()
			}
		})
	}
	wg.Wait()
}
