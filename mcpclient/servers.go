package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
)

// Servers is one session's MCP servers: the editor's configuration, their
// connections, and the tools they put in the session's scope. It knows
// the session only through what it is given: the scope, a logger, how
// long a start may wait, and how to tell the user something (Notify,
// once the editor knows the session: Announce).
type Servers struct {
	Scope         *registry.Scope
	Log           *slog.Logger
	ClientName    string        // as the servers see this client
	ClientVersion string        // as the servers see this client
	Bound         time.Duration // how long Start waits; 0: DefaultStartTimeout
	Notify        func(n Notice)
	// Elicit asks the user what a server asks; ElicitURL: the editor takes
	// URL elicitations, ElicitComplete says one is done (Options).
	Elicit         func(ctx context.Context, e Elicitation) (ElicitAnswer, error)
	ElicitURL      bool
	ElicitComplete func(id string)

	mu      sync.Mutex
	servers map[string]*server // by the editor's name
	// announced: the editor knows the session (the response that names it
	// has been written), so notices may be sent; until then they wait.
	announced bool
	pending   []Notice
	closed    bool
}

// Notice is something the user should hear about a session's servers, in
// both forms: agent text (Text) and a titled notice.
type Notice struct {
	Text, Severity, Title, Description string
}

// Notice severities (ACP's notice severities).
const (
	SeverityInfo    = "info"
	SeverityWarning = "warning"
	SeverityError   = "error"
)

// DefaultStartTimeout bounds how long Start waits for the session's
// servers (session/new, load, resume). A slower server keeps starting in
// the background and its tools appear when it is ready.
const DefaultStartTimeout = 5 * time.Second

// server is one configured server, connecting, connected or gone.
type server struct {
	cfg     Server
	key     string          // the configuration, to tell a changed server on resume
	ctx     context.Context // the connection attempt's; cancelled by a stop
	cancel  context.CancelFunc
	settled chan struct{} // closed when the connection attempt has ended

	mu      sync.Mutex
	conn    *Conn
	unreg   []func() // its tools' registrations in the session scope
	late    bool     // still starting when the session was answered
	stopped bool     // stopped by us: closed session, or dropped on resume
	dead    bool     // ended on its own
}

// Start connects the session to servers, in parallel, and returns when
// all have connected or failed, or after the start bound, whichever is
// first. Failures are logged and told to the user (after the response to
// ctx's request, when the editor knows the session); they never fail the
// request. Called again (session/load, session/resume), it keeps servers
// whose configuration is unchanged, stops those no longer given and starts
// the new ones.
func (m *Servers) Start(ctx context.Context, servers []Server) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.announced = false
	if m.servers == nil {
		m.servers = map[string]*server{}
	}
	want := map[string]string{}
	var dups []string
	var order []Server
	for _, cfg := range servers {
		if _, dup := want[cfg.Name]; dup {
			dups = append(dups, cfg.Name)
			continue
		}
		want[cfg.Name] = configKey(cfg)
		order = append(order, cfg)
	}
	var stale, fresh []*server
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
		srv := &server{cfg: cfg, key: want[cfg.Name], settled: make(chan struct{})}
		// The cancel exists before the server is visible: a stop may come
		// from another goroutine at once.
		srv.ctx, srv.cancel = context.WithCancel(context.Background())
		m.servers[cfg.Name] = srv
		fresh = append(fresh, srv)
	}
	m.mu.Unlock()

	stopServers(stale)
	for _, name := range dups {
		m.Log.Warn("MCP server given twice; the first wins", "mcpServer", name)
		m.notice(fmt.Sprintf("MCP server %q is configured twice; only the first configuration is used.", name),
			SeverityWarning, fmt.Sprintf("MCP server %q is configured twice", name), "Only the first configuration is used.")
	}
	for _, srv := range fresh {
		go m.run(srv.ctx, srv)
	}

	bound := m.Bound
	if bound <= 0 {
		bound = DefaultStartTimeout
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
		m.Log.Info("MCP server still starting; going on without it for now", "mcpServer", srv.cfg.Name, "waited", bound)
		m.notice(fmt.Sprintf("MCP server %q is still starting; its tools will be available once it is ready.", srv.cfg.Name),
			SeverityInfo, fmt.Sprintf("MCP server %q is still starting", srv.cfg.Name), "Its tools will be available once it is ready.")
	}
}

func configKey(cfg Server) string {
	b, _ := json.Marshal(cfg)
	return string(b)
}

// run connects one server and puts its tools in the session's scope.
func (m *Servers) run(ctx context.Context, srv *server) {
	defer close(srv.settled)
	if ctx.Err() != nil {
		return // stopped before it started
	}
	name := srv.cfg.Name
	log := m.Log.With("mcpServer", name)
	conn, err := Connect(ctx, srv.cfg, &Options{
		Logger:         log,
		ClientName:     m.ClientName,
		ClientVersion:  m.ClientVersion,
		OnToolsChanged: func(c *Conn) { m.tools(srv, c, true) },
		OnExit:         func(_ *Conn, err error) { m.exited(srv, err) },
		Elicit:         m.Elicit,
		ElicitURL:      m.ElicitURL,
		ElicitComplete: m.ElicitComplete,
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
			SeverityError, fmt.Sprintf("MCP server %q failed to start", name), fmt.Sprintf("%v. The session goes on without its tools.", err))
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
			SeverityInfo, fmt.Sprintf("MCP server %q is ready", name), fmt.Sprintf("%d tools.", n))
	}
}

// tools replaces the server's tools in the session's scope with its
// current ones; the next model request sees them. It returns how many.
func (m *Servers) tools(srv *server, c *Conn, changed bool) int {
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
		u, err := m.Scope.Register(d)
		if err != nil {
			// Two servers whose names differ only in characters that tool
			// names cannot hold: the first keeps the name.
			m.Log.Warn("MCP tool not registered", "mcpServer", srv.cfg.Name, "tool", d.Name, "err", err)
			continue
		}
		srv.unreg = append(srv.unreg, u)
	}
	if changed {
		m.Log.Info("MCP server tools updated", "mcpServer", srv.cfg.Name, "tools", len(srv.unreg))
	}
	return len(srv.unreg)
}

// exited handles a server that died or hung up: its tools go, and the
// user is told.
func (m *Servers) exited(srv *server, err error) {
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
	m.Log.Info("MCP server stopped", "mcpServer", srv.cfg.Name, "err", err) // and the notice says so
	m.notice(fmt.Sprintf("MCP server %q stopped: %v. Its tools are no longer available.", srv.cfg.Name, err),
		SeverityError, fmt.Sprintf("MCP server %q stopped", srv.cfg.Name), fmt.Sprintf("%v. Its tools are no longer available.", err))
}

// notice tells the user something about the session's servers, now if
// the editor knows the session, else once it does.
// text is how it reads as agent text; severity, title and desc as a notice
// (for clients that take them).
func (m *Servers) notice(text, severity, title, desc string) {
	n := Notice{Text: "\n\n[" + text + "]\n\n", Severity: severity, Title: title, Description: desc}
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
	m.Notify(n)
}

// Announce runs once the editor knows the session (after the response that
// names it, and again after each Start): queued notices go out.
func (m *Servers) Announce() {
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
		m.Notify(n)
	}
}

// Stop stops every server of the session and waits until they are gone.
// The session will start no more.
func (m *Servers) Stop() {
	m.mu.Lock()
	m.closed = true
	var all []*server
	for _, srv := range m.servers {
		all = append(all, srv)
	}
	m.servers = nil
	m.pending = nil
	m.mu.Unlock()
	stopServers(all)
}

// stopServers stops servers in parallel: each may take its grace steps.
func stopServers(servers []*server) {
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
