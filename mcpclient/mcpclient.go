// Package mcpclient connects to the MCP servers an editor hands an ACP agent
// (stdio, streamable HTTP and SSE) with the official go-sdk, and turns each
// server's tools into registry definitions named mcp__<server>__<tool>, with
// the server's own JSON Schema. It knows nothing about ACP or sessions: the
// agent decides when to connect, where the tools go and what to tell the user.
package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/sandbox"
)

// Transport kinds of a Server.
const (
	Stdio = "stdio"
	HTTP  = "http"
	SSE   = "sse"
)

// Server is one MCP server to connect to.
type Server struct {
	Name string
	Type string // Stdio (or ""), HTTP or SSE

	// stdio
	Command string
	Args    []string
	Env     []EnvVar // added to the bridge's own environment
	Dir     string   // working directory; "" is the bridge's
	// Sandbox confines the server's process (sandbox.Wrap); nil runs it
	// as it is. A server started under a policy keeps it until restarted.
	Sandbox *sandbox.Policy

	// http, sse
	URL     string
	Headers []Header
}

// EnvVar is one environment variable of a stdio server.
type EnvVar struct{ Name, Value string }

// Header is one HTTP header sent with every request to a remote server.
type Header struct{ Name, Value string }

// Options configure a connection. The zero value (or nil) is valid.
type Options struct {
	Logger *slog.Logger
	// ClientName and ClientVersion are what the server is told we are.
	ClientName, ClientVersion string
	// ConnectTimeout bounds starting and initializing the server (default
	// 30s). It is not the agent's wait: the agent may stop waiting sooner
	// and let the connection finish in the background.
	ConnectTimeout time.Duration
	// StopGrace is how long Close waits at each step (stdin closed, SIGTERM)
	// before the next, harsher one (default 2s).
	StopGrace time.Duration
	// HTTPClient is used for remote servers; nil means a fresh client.
	HTTPClient *http.Client
	// OnToolsChanged is called (from a goroutine of the connection) after
	// the server said its tools changed and Tools has been refreshed.
	OnToolsChanged func(*Conn)
	// OnExit is called once if the connection ends without Close: the
	// server died or hung up. err says how.
	OnExit func(c *Conn, err error)
	// Elicit answers the server's elicitation/create by asking the user
	// (elicit.go); nil declines every one. ElicitURL: the URL mode is
	// offered too. ElicitComplete is told when the server says a URL
	// elicitation is done.
	Elicit         func(ctx context.Context, e Elicitation) (ElicitAnswer, error)
	ElicitURL      bool
	ElicitComplete func(id string)
}

// Conn is a live connection to one server.
type Conn struct {
	srv  Server
	o    Options
	log  *slog.Logger
	cs   *mcp.ClientSession
	proc *process // stdio only

	mu      sync.Mutex
	tools   []*registry.Def
	closing bool

	refresh chan struct{} // coalesced tools/list_changed signals
	done    chan struct{} // closed when the connection has ended
	stopped chan struct{} // closed when Close has finished
	once    sync.Once
}

// ErrStopped is the error of a connection that Close ended.
var ErrStopped = errors.New("mcp server stopped")

// Connect starts (stdio) or reaches (http, sse) the server, initializes the
// MCP session and lists its tools. On failure nothing is left running.
func Connect(ctx context.Context, s Server, opts *Options) (*Conn, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ClientName == "" {
		o.ClientName = "acp-bridge"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 2 * time.Second
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	c := &Conn{srv: s, o: o, log: o.Logger.With("mcpServer", s.Name),
		refresh: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}

	ctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
	defer cancel()
	var t mcp.Transport
	switch s.Type {
	case Stdio, "":
		p, err := startProcess(s, c.log)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", s.Command, err)
		}
		c.proc = p
		t = &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}
	case HTTP:
		t = &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: o.httpClient(s.Headers)}
	case SSE:
		t = detached{&mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: o.httpClient(s.Headers)}}
	}
	copts := &mcp.ClientOptions{
		Logger: c.log,
		// We offer no roots or sampling: the editor is the user's
		// interface, and the bridge does not relay those. Elicitation is
		// relayed to the editor (elicit.go).
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.refresh <- struct{}{}:
			default: // a refresh is already due; it will see this change too
			}
		},
	}
	o.elicitation(s.Name, copts)
	client := mcp.NewClient(&mcp.Implementation{Name: o.ClientName, Version: o.ClientVersion}, copts)
	cs, err := c.connect(ctx, client, t)
	if err != nil {
		if c.proc != nil {
			c.proc.stop(o.StopGrace)
			err = errors.New(withStderr(c.describe(err), c.proc.stderr))
		}
		return nil, err
	}
	c.cs = cs
	tools, err := c.list(ctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("list tools: %w", err)
	}
	c.tools = tools
	go c.watch()
	go c.refreshLoop()
	return c, nil
}

// connect initializes the session, giving up early if a stdio server exits
// during the handshake (its stdout may stay open in a grandchild).
func (c *Conn) connect(ctx context.Context, client *mcp.Client, t mcp.Transport) (*mcp.ClientSession, error) {
	if c.proc == nil {
		return client.Connect(ctx, t, nil)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-c.proc.exited:
			cancel(fmt.Errorf("server exited during startup (%s)", c.proc.exitStatus()))
		case <-ctx.Done():
		}
	}()
	cs, err := client.Connect(ctx, t, nil)
	if err != nil && context.Cause(ctx) != nil && !errors.Is(context.Cause(ctx), context.Canceled) {
		return nil, context.Cause(ctx)
	}
	return cs, err
}

func (c *Conn) describe(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer to initialize within %s", c.o.ConnectTimeout)
	}
	return err.Error()
}

func (s Server) check() error {
	if s.Name == "" {
		return errors.New("mcp server without a name")
	}
	switch s.Type {
	case Stdio, "":
		if s.Command == "" {
			return fmt.Errorf("mcp server %q: no command", s.Name)
		}
	case HTTP, SSE:
		if s.URL == "" {
			return fmt.Errorf("mcp server %q: no url", s.Name)
		}
	default:
		return fmt.Errorf("mcp server %q: transport %q is not supported (stdio, http and sse are)", s.Name, s.Type)
	}
	return nil
}

// Name is the server's name as the editor gave it.
func (c *Conn) Name() string { return c.srv.Name }

// Tools returns the server's tools as registry definitions, as of the last
// listing.
func (c *Conn) Tools() []*registry.Def {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*registry.Def(nil), c.tools...)
}

// Done is closed when the connection has ended, by Close or otherwise.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close ends the session and stops the server process (if any), escalating
// to SIGKILL; it returns once the server is gone. It is idempotent.
func (c *Conn) Close() error {
	c.mu.Lock()
	first := !c.closing
	c.closing = true
	c.mu.Unlock()
	if !first {
		<-c.stopped
		return nil
	}
	defer close(c.stopped)
	if c.cs != nil {
		// ClientSession.Close waits for calls in flight; a server that never
		// answers must not hold us: the process stop below unblocks it.
		closed := make(chan struct{})
		go func() { c.cs.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(c.o.StopGrace):
		}
	}
	if c.proc != nil {
		c.proc.stop(c.o.StopGrace)
	}
	c.finish()
	return nil
}

func (c *Conn) finish() { c.once.Do(func() { close(c.done) }) }

// watch notices the connection ending on its own and reports it.
func (c *Conn) watch() {
	ended := make(chan struct{})
	go func() { c.cs.Wait(); close(ended) }()
	var exited <-chan struct{}
	if c.proc != nil {
		exited = c.proc.exited
	}
	select {
	case <-ended:
	case <-exited:
	case <-c.stopped:
		return
	}
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return
	}
	var err error
	if c.proc != nil {
		// The process may still be alive with its stdout closed: make sure
		// it is gone, then say how it ended.
		go c.cs.Close()
		c.proc.stop(c.o.StopGrace)
		err = errors.New(withStderr("server exited ("+c.proc.exitStatus()+")", c.proc.stderr))
	} else {
		c.cs.Close()
		err = errors.New("server closed the connection")
	}
	// Info: OnExit reports it to whoever tells the user (the agent: a
	// notice); a warning would repeat it on stderr.
	c.log.Info("mcp server connection ended", "err", err)
	c.finish()
	if c.o.OnExit != nil {
		c.o.OnExit(c, err)
	}
}

// refreshLoop re-lists the tools after tools/list_changed. It runs apart
// from the notification handler, which must not make requests itself.
func (c *Conn) refreshLoop() {
	for {
		select {
		case <-c.done:
			return
		case <-c.refresh:
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.o.ConnectTimeout)
		tools, err := c.list(ctx)
		cancel()
		if err != nil {
			c.log.Warn("mcp tools refresh failed", "err", err)
			continue
		}
		c.mu.Lock()
		c.tools = tools
		c.mu.Unlock()
		c.log.Info("mcp server tools changed", "tools", len(tools))
		if c.o.OnToolsChanged != nil {
			c.o.OnToolsChanged(c)
		}
	}
}

// list fetches every tool (all pages) and defines each. A tool that cannot
// be defined is logged and left out; the others still work.
func (c *Conn) list(ctx context.Context) ([]*registry.Def, error) {
	if r := c.cs.InitializeResult(); r != nil && r.Capabilities != nil && r.Capabilities.Tools == nil {
		return nil, nil
	}
	var defs []*registry.Def
	names := map[string]bool{}
	for t, err := range c.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		d, err := c.define(t, names)
		if err != nil {
			c.log.Warn("mcp tool skipped", "tool", t.Name, "err", err)
			continue
		}
		defs = append(defs, d)
	}
	return defs, nil
}

// detached connects a transport whose stream lives as long as the context
// it was connected with (the SSE transport's GET does) with a context that
// keeps Connect's values but not its deadline: the handshake is bounded, the
// stream is not. Closing the session ends the stream.
type detached struct{ mcp.Transport }

func (d detached) Connect(ctx context.Context) (mcp.Connection, error) {
	return d.Transport.Connect(context.WithoutCancel(ctx))
}

// httpClient sends the editor's headers with every request.
func (o Options) httpClient(h []Header) *http.Client {
	base := o.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	if len(h) == 0 {
		return base
	}
	cl := *base
	next := cl.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	cl.Transport = headerTransport{headers: h, next: next}
	return &cl
}

type headerTransport struct {
	headers []Header
	next    http.RoundTripper
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for _, h := range t.headers {
		req.Header.Set(h.Name, h.Value)
	}
	return t.next.RoundTrip(req)
}
