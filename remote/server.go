// Package remote serves ACP over the network: Streamable HTTP (POST, SSE
// streams, DELETE) and WebSocket on one path, /acp, as the ACP remote
// transport RFD describes, plus GET /health.
//
// Each network connection gets an agent of its own, driven through an
// [acp.Conn] over an in-memory line stream (conn.go): the agent cannot tell
// this transport from stdio. Connections share what the caller's agent
// factory shares (cmd/acp-bridge gives every one the same session store), so
// a session outlives the connection that opened it.
//
// The network is hostile (guard.go): Host, Origin and the bearer token are
// checked on every request and upgrade before anything else; bodies,
// connections, sessions and each connection's unsent output are bounded; a
// client's cwd must lie under the server's roots (screen.go).
package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
)

// Path is where ACP is served; the RFD's convention.
const Path = "/acp"

// The headers of the RFD.
const (
	HeaderConnectionID = "Acp-Connection-Id"
	HeaderSessionID    = "Acp-Session-Id"
)

// Agent is what a connection runs: an ACP agent that can be shut down
// (every session stopped and saved) when its connection ends.
// *agent.Agent is one.
type Agent interface {
	acp.Agent
	Shutdown()
}

// handOver is an Agent that can let go of sessions another holder asked for
// (agent.Agent.HandOverRequested): how a session open on one connection is
// loaded on another.
type handOver interface{ HandOverRequested() }

// Options configure a Server. NewAgent is required; zero limits take the
// defaults below.
type Options struct {
	// NewAgent builds the agent of one connection, talking to its client.
	NewAgent func(acp.Client) Agent
	Logger   *slog.Logger

	// Token, when not empty, must be sent as "Authorization: Bearer
	// <token>" with every request and upgrade (401 otherwise).
	Token string
	// Hosts are the names (host names or IPs, no port) a request's Host
	// may carry (403 otherwise). Empty allows only loopback names.
	Hosts []string
	// Origins are the browser origins ("https://app.example") allowed
	// besides loopback ones when LoopbackOrigins is set; a request with
	// any other Origin header gets 403. Requests without Origin (not from
	// a browser) are not refused for it.
	Origins         []string
	LoopbackOrigins bool
	// Roots: a client's cwd and additional directories must lie under one
	// of them (JSON-RPC -32602 otherwise). Empty refuses every cwd.
	Roots []string

	MaxBody        int64         // one POST body or WebSocket message (413); default 16 MiB
	MaxConnections int           // live ACP connections (503); default 64
	MaxSessions    int           // sessions open across connections (503); default 256
	MaxBuffered    int           // a connection's unsent output, bytes; over it the client is dropped; default 8 MiB
	MaxInflight    int64         // bytes of the requests running across connections (503); default 256 MiB (see conn.deliver)
	IdleTimeout    time.Duration // a connection nobody listens to is dropped after this; default 10 min
	WriteTimeout   time.Duration // one write to a client; a slower client is dropped; default 30 s
	KeepAlive      time.Duration // SSE comment / WebSocket ping interval; default 15 s
}

const (
	defaultMaxBody        = 16 << 20
	defaultMaxConnections = 64
	defaultMaxSessions    = 256
	defaultMaxBuffered    = 8 << 20
	defaultMaxInflight    = 256 << 20
	defaultIdleTimeout    = 10 * time.Minute
	defaultWriteTimeout   = 30 * time.Second
	defaultKeepAlive      = 15 * time.Second
	// initializeTimeout bounds the wait for the agent's initialize answer.
	initializeTimeout = 30 * time.Second
)

// Server is an http.Handler serving ACP on Path and GET /health.
type Server struct {
	o       Options
	log     *slog.Logger
	guard   *guard
	roots   []string
	limiter *limiter        // set by HTTPServer
	ctx     context.Context // the agents' connections live in it
	stop    context.CancelFunc

	mu       sync.Mutex
	conns    map[string]*conn
	closing  atomic.Bool  // no new connections, no new prompts
	sessions atomic.Int64 // open across connections
	inflight atomic.Int64 // bytes of the client requests running, across connections
	wg       sync.WaitGroup
}

// New returns a Server. Call Close (or Shutdown) when done.
func New(o Options) (*Server, error) {
	if o.NewAgent == nil {
		return nil, errors.New("remote: Options.NewAgent is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	setDefault(&o.MaxBody, defaultMaxBody)
	setDefault(&o.MaxConnections, defaultMaxConnections)
	setDefault(&o.MaxSessions, defaultMaxSessions)
	setDefault(&o.MaxBuffered, defaultMaxBuffered)
	setDefault(&o.MaxInflight, defaultMaxInflight)
	setDefault(&o.IdleTimeout, defaultIdleTimeout)
	setDefault(&o.WriteTimeout, defaultWriteTimeout)
	setDefault(&o.KeepAlive, defaultKeepAlive)
	g, err := newGuard(o)
	if err != nil {
		return nil, err
	}
	roots, err := cleanRoots(o.Roots)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{o: o, log: o.Logger, guard: g, roots: roots, ctx: ctx, stop: stop, conns: map[string]*conn{}}
	s.wg.Go(s.reapIdle)
	return s, nil
}

func setDefault[T int | int64 | time.Duration](p *T, v T) {
	if *p <= 0 {
		*p = v
	}
}

// ServeHTTP checks every request (guard.go), then routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.guard.check(w, r) {
		return
	}
	switch {
	case r.URL.Path == "/health" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.health(w)
	case r.URL.Path != Path:
		http.NotFound(w, r)
	case r.Method == http.MethodGet && isUpgrade(r):
		s.serveWebSocket(w, r)
	case r.Method == http.MethodPost:
		s.post(w, r)
	case r.Method == http.MethodGet:
		s.get(w, r)
	case r.Method == http.MethodDelete:
		s.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE, OPTIONS")
		httpError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

// health says only whether the server takes connections: it needs no
// token, so it tells nothing about them.
func (s *Server) health(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if s.closing.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"status":"closing"}`+"\n")
		return
	}
	io.WriteString(w, `{"status":"ok"}`+"\n")
}

// Stats are a server's live counts.
type Stats struct{ Connections, Sessions int }

// Stats returns the live counts.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Connections: len(s.conns), Sessions: int(s.sessions.Load())}
}

// open registers a new connection, or says why not (503).
func (s *Server) open(transport, remote string) (*conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return nil, errClosing
	}
	if len(s.conns) >= s.o.MaxConnections {
		return nil, errTooManyConns
	}
	c := newConn(s, newID(), transport)
	s.conns[c.id] = c
	s.log.Info("connection opened", "conn", c.id, "transport", transport, "remote", remote)
	return c, nil
}

// stopTaking refuses new connections and new goroutines (spawn) from
// now on. Under s.mu, so that whatever open or spawn let through is
// registered before Close ends the connections and waits for s.wg: a
// WaitGroup's Add must not race its Wait.
func (s *Server) stopTaking() {
	s.mu.Lock()
	s.closing.Store(true)
	s.mu.Unlock()
}

// spawn runs f on a goroutine Close waits for, unless the server is
// closing (false: f is not run).
func (s *Server) spawn(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return false
	}
	s.wg.Go(f)
	return true
}

var (
	errClosing      = errors.New("the server is shutting down")
	errTooManyConns = errors.New("too many connections")
)

func (s *Server) lookup(id string) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[id]
}

// forget is called by a connection that has ended.
func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c.id)
	s.mu.Unlock()
}

func (s *Server) each(f func(*conn)) {
	s.mu.Lock()
	cs := slices.Collect(maps.Values(s.conns))
	s.mu.Unlock()
	for _, c := range cs {
		f(c)
	}
}

// HandOverRequested asks every connection's agent to let go of the idle
// sessions another holder asked for (session.Store.RequestHandOver): a
// session still open on one connection is loaded on another this way.
func (s *Server) HandOverRequested() {
	s.each(func(c *conn) {
		if h, ok := c.agent.(handOver); ok {
			h.HandOverRequested()
		}
	})
}

// Shutdown stops taking connections and prompts, waits until no request is
// running on any connection (turns end) or ctx ends, then ends every
// connection: its agent shuts down, which stops what still runs and saves
// every session.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopTaking()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var err error
wait:
	for {
		busy := false
		s.each(func(c *conn) { busy = busy || c.busy() })
		if !busy {
			break
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
			break wait
		case <-tick.C:
		}
	}
	s.Close()
	return err
}

// Close ends every connection now (running turns are cancelled and
// saved) and waits for their agents to shut down.
func (s *Server) Close() {
	s.stopTaking()
	var wg sync.WaitGroup
	s.each(func(c *conn) { wg.Go(func() { c.end("server closing") }) })
	wg.Wait()
	s.stop()
	s.wg.Wait()
}

// reapIdle drops connections nobody has listened to for IdleTimeout.
func (s *Server) reapIdle() {
	every := min(s.o.IdleTimeout/2, 30*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			s.each(func(c *conn) {
				if c.idleSince(now) >= s.o.IdleTimeout {
					c.drop("idle")
				}
			})
		}
	}
}

// newID is a random UUID (v4), the form the SDKs use for connection ids.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func httpError(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	io.WriteString(w, msg+"\n")
}
