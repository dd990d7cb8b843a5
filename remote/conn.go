package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
)

// conn is one ACP connection: an agent of its own behind an acp.Conn that
// reads the client's messages from a pipe and writes the agent's through
// conn.Write, which routes each to the transport (sse.go, ws.go).
//
// The client may go (a socket drops, DELETE, idle, too slow) while the
// agent still works: then the connection is "gone". A running turn goes on
// and is saved; each request the agent makes of the client from then on
// (and each still unanswered) is answered here, a permission request as
// cancelled; what the agent says is dropped. Once no request of the
// client's is running, the agent's connection ends and the agent shuts
// down, which closes its sessions so another connection may load them.
type conn struct {
	id        string
	srv       *Server
	log       *slog.Logger
	transport string
	opened    time.Time
	agent     Agent
	rpc       *acp.Conn
	in        *io.PipeWriter
	inMu      sync.Mutex // one whole message into the pipe at a time
	finished  sync.Once
	done      chan struct{}

	mu        sync.Mutex
	out       sink               // nil until the transport sets it, and once gone
	pending   map[string]pending // the client's requests not yet answered, by id
	asked     map[string]string  // the agent's requests not yet answered: id -> method
	sessions  map[string]bool    // sessions opened on this connection
	listeners int                // attached SSE streams, or 1 for an open WebSocket
	lastSeen  time.Time          // the last message or stream detach
	gone      bool               // the client is gone
	reason    string             // why it went
	initDone  bool               // initialize was the first message
}

// pending is a client request in flight. reply, when set, receives the
// answer instead of the transport (the initialize POST's body).
type pending struct {
	method  string
	session string // where the answer goes: the session header or params.sessionId
	reply   chan []byte
	size    int64 // the request's bytes, counted in Server.inflight until it is answered
}

// sink is where a connection's outbound messages go. send must not block:
// it queues, bounded, and says errSlow when the client has fallen too far
// behind (the connection is then dropped).
type sink interface {
	send(session string, line []byte) error
	openSession(session string)
	close()
}

var errSlow = errors.New("the client does not read what it is sent")

func newConn(s *Server, id, transport string) *conn {
	pr, pw := io.Pipe()
	now := time.Now()
	c := &conn{
		id: id, srv: s, log: s.log.With("conn", id), transport: transport, opened: now, in: pw,
		done: make(chan struct{}), pending: map[string]pending{}, asked: map[string]string{},
		sessions: map[string]bool{}, lastSeen: now,
	}
	c.rpc = acp.NewConn(s.ctx, func(cl acp.Client) acp.Agent {
		c.agent = s.o.NewAgent(cl)
		return c.agent
	}, pr, (*outbound)(c), pr, &acp.Options{Logger: c.log, MaxMessageSize: int(s.o.MaxBody)})
	s.wg.Go(c.wait)
	return c
}

// wait shuts the agent down once its connection has ended.
func (c *conn) wait() {
	<-c.rpc.Done()
	c.agent.Shutdown()
	c.rpc.Wait()
	c.mu.Lock()
	n, reason := len(c.sessions), c.reason
	c.srv.sessions.Add(-int64(n))
	c.sessions = nil
	for id, p := range c.pending { // never answered: the agent has ended
		c.srv.inflight.Add(-p.size)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	c.srv.forget(c)
	c.log.Info("connection closed", "reason", reason, "sessions", n, "duration", time.Since(c.opened).Round(time.Millisecond))
	close(c.done)
}

// setSink gives the connection its transport.
func (c *conn) setSink(s sink) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out = s
}

// listen counts a transport stream attaching (+1) or detaching (-1).
func (c *conn) listen(d int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listeners += d
	c.lastSeen = time.Now()
}

// idleSince is how long nobody has listened to the connection.
func (c *conn) idleSince(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.listeners > 0 || c.gone {
		return 0
	}
	return now.Sub(c.lastSeen)
}

// busy reports whether a request of the client's is still running.
func (c *conn) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) > 0
}

// drop is the client going away: what runs goes on, unwatched (see conn).
func (c *conn) drop(reason string) {
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		return
	}
	c.gone, c.reason = true, reason
	out, asked, idle := c.out, c.asked, len(c.pending) == 0
	c.out, c.asked = nil, map[string]string{}
	c.mu.Unlock()
	if out != nil {
		out.close()
	}
	for id, m := range asked {
		c.answerForClient(json.RawMessage(id), m)
	}
	if idle {
		c.finish()
	}
}

// end drops the client and ends the agent's connection now: a running
// turn is cancelled (and saved so).
func (c *conn) end(reason string) {
	c.drop(reason)
	c.finish()
	<-c.done
}

// finish ends the agent's connection: the pipe's EOF ends its read loop.
func (c *conn) finish() {
	c.finished.Do(func() { c.in.Close() })
}

// answerForClient answers a request of the agent's that the client, gone,
// never will: a permission request is cancelled (as ACP says a client
// must answer one when the turn is cancelled), anything else fails.
func (c *conn) answerForClient(id json.RawMessage, method string) {
	var line []byte
	if method == acp.MethodSessionRequestPermission {
		line, _ = json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  any             `json:"result"`
		}{"2.0", id, map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}})
	} else {
		line = errorLine(id, &acp.Error{Code: acp.CodeInternalError, Message: "the client disconnected"})
	}
	c.writeIn(line)
}

// writeIn hands one message line to the agent.
func (c *conn) writeIn(line []byte) error {
	c.inMu.Lock()
	defer c.inMu.Unlock()
	_, err := c.in.Write(append(line, '\n'))
	return err
}

// message is what the transport reads of a JSON-RPC message to route it.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (m *message) hasID() bool { return len(m.ID) > 0 && string(m.ID) != "null" }

// sessionParam is params.sessionId, or "".
func sessionParam(params json.RawMessage) string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if len(params) > 0 && params[0] == '{' {
		json.Unmarshal(params, &p)
	}
	return p.SessionID
}

// Errors of an inbound message, which the transports turn into statuses.
var (
	errBadJSON         = errors.New("the body is not a JSON-RPC message")
	errBatch           = errors.New("JSON-RPC batches are not supported: send one message per request (or per WebSocket frame)")
	errNotInitialize   = errors.New("the first message must be initialize")
	errSessionMismatch = errors.New("the Acp-Session-Id header and params.sessionId differ")
	errNoSession       = errors.New("a session-scoped request needs the Acp-Session-Id header")
	errTooManySessions = errors.New("too many sessions are open on this server")
	errTooManyRequests = errors.New("too many requests of this connection are running")
	errBusy            = errors.New("the requests running on this server hold too many bytes: send it again once one has ended")
	errGone            = errors.New("unknown connection")
	errDuplicateID     = errors.New("a request with this id is already running on this connection")
	errLongID          = errors.New("a request id or session id is at most " + strconv.Itoa(maxIDBytes) + " bytes")
)

// maxIDBytes bounds a request id and a session id (Acp-Session-Id or
// params.sessionId). A session id names a mailbox the connection keeps
// until it ends (sse.go), and a request id a pending entry while it runs:
// unbounded, ids as long as a body would let one connection park 256
// mailboxes of MaxBody-long names (remote/attacks_test.go,
// TestLongIDsRefused: 30 MB kept for 48 answered ids of 512 KiB before).
const maxIDBytes = 256

// sessionScoped are the methods the RFD routes by session.
var sessionScoped = map[string]bool{
	acp.MethodSessionPrompt: true, acp.MethodSessionCancel: true, acp.MethodSessionClose: true,
	acp.MethodSessionDelete: true, acp.MethodSessionFork: true, acp.MethodSessionLoad: true,
	acp.MethodSessionResume: true, acp.MethodSessionSetConfigOption: true,
	acp.MethodSessionSetMode: true, acp.MethodSessionSetModel: true,
}

// maxPending bounds a connection's requests running at once: each is a
// goroutine of the agent's, and a client must not make them without end.
const maxPending = 256

// opensSession are the requests whose success opens a session here.
var opensSession = map[string]bool{
	acp.MethodSessionNew: true, acp.MethodSessionLoad: true, acp.MethodSessionResume: true, acp.MethodSessionFork: true,
}

// deliver hands one client message to the agent. header is the
// Acp-Session-Id header ("" over WebSocket). reply, when not nil, takes
// the answer to this request instead of the transport.
func (c *conn) deliver(raw []byte, header string, reply chan []byte) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return errBadJSON
	}
	line := buf.Bytes()
	if len(line) > 0 && line[0] == '[' {
		return errBatch
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		return errBadJSON
	}
	param := sessionParam(m.Params)
	if len(header) > maxIDBytes || len(param) > maxIDBytes || len(m.ID) > maxIDBytes {
		return errLongID
	}
	if header != "" && param != "" && header != param {
		return errSessionMismatch
	}
	route := header
	if route == "" {
		route = param
	}
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		return errGone
	}
	c.lastSeen = time.Now()
	if !c.initDone {
		if m.Method != acp.MethodInitialize || !m.hasID() {
			c.mu.Unlock()
			return errNotInitialize
		}
		c.initDone = true
	}
	switch {
	case m.Method != "" && m.hasID():
		if sessionScoped[m.Method] && route == "" && c.transport == transportHTTP {
			c.mu.Unlock()
			return errNoSession
		}
		if len(c.pending) >= maxPending {
			c.mu.Unlock()
			return errTooManyRequests
		}
		if opensSession[m.Method] && int(c.srv.sessions.Load()) >= c.srv.o.MaxSessions && !c.sessions[param] {
			c.mu.Unlock()
			return errTooManySessions
		}
		e := c.srv.screen(&m)
		if e == nil && m.Method == acp.MethodSessionPrompt && c.srv.closing.Load() {
			e = &acp.Error{Code: acp.CodeInternalError, Message: "the server is shutting down: the prompt was not run; send it again once it is back"}
		}
		if e != nil {
			c.mu.Unlock()
			c.reply(route, m.ID, e)
			return nil
		}
		if _, dup := c.pending[string(m.ID)]; dup {
			// Its answer could not be told from the other's, and the
			// first one's bytes would stay counted for good.
			c.mu.Unlock()
			return errDuplicateID
		}
		// An agent holds a request until it answers (a prompt for its
		// whole turn): counted by count alone, 256 running requests of
		// MaxBody each per connection could hold 4 GiB.
		size := int64(len(line))
		if c.srv.inflight.Add(size) > c.srv.o.MaxInflight {
			c.srv.inflight.Add(-size)
			c.mu.Unlock()
			return errBusy
		}
		c.pending[string(m.ID)] = pending{method: m.Method, session: route, reply: reply, size: size}
		if route != "" && c.out != nil {
			c.out.openSession(route)
		}
	case m.Method == "" && m.hasID():
		delete(c.asked, string(m.ID))
	}
	c.mu.Unlock()
	if err := c.writeIn(line); err != nil {
		return errGone
	}
	return nil
}

// reply sends an error answer made here (not by the agent) to the client.
func (c *conn) reply(route string, id json.RawMessage, e *acp.Error) {
	line := append(errorLine(id, e), '\n')
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.out != nil {
		if err := c.out.send(route, line); err != nil {
			go c.drop(err.Error())
		}
	}
}

func errorLine(id json.RawMessage, e *acp.Error) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *acp.Error      `json:"error"`
	}{"2.0", id, e})
	return b
}

// outbound is the agent's side of the pipe: acp.Conn writes each message
// as one line (acp/stream.go), never concurrently.
type outbound conn

func (o *outbound) Write(b []byte) (int, error) {
	c := (*conn)(o)
	n := len(b)
	line := bytes.Clone(b)
	var m message
	json.Unmarshal(line, &m)
	c.mu.Lock()
	defer c.mu.Unlock()
	route := ""
	switch {
	case m.Method != "" && m.hasID(): // the agent asks the client
		if c.gone {
			go c.answerForClient(m.ID, m.Method)
			return n, nil
		}
		c.asked[string(m.ID)] = m.Method
		route = sessionParam(m.Params)
	case m.Method != "": // a notification
		route = sessionParam(m.Params)
	case m.hasID(): // an answer to the client
		p, ok := c.pending[string(m.ID)]
		if !ok {
			break
		}
		delete(c.pending, string(m.ID))
		c.srv.inflight.Add(-p.size)
		route = p.session
		line = c.answered(p, &m, line)
		if p.reply != nil {
			p.reply <- line
			return n, nil
		}
		if c.gone && len(c.pending) == 0 {
			go c.finish()
		}
	}
	if c.out == nil {
		return n, nil
	}
	if err := c.out.send(route, line); err != nil {
		go c.drop(err.Error())
	}
	return n, nil
}

// answered keeps count of the sessions open on this connection as their
// requests succeed, and returns the answer to send (a session list shows
// only sessions under the roots). Called with c.mu held.
func (c *conn) answered(p pending, m *message, line []byte) []byte {
	if len(m.Error) > 0 {
		return line
	}
	switch {
	case opensSession[p.method]:
		id := p.session
		if p.method == acp.MethodSessionNew || p.method == acp.MethodSessionFork || id == "" {
			id = sessionParam(m.Result)
		}
		if id != "" && !c.sessions[id] && !c.gone {
			c.sessions[id] = true
			c.srv.sessions.Add(1)
			if c.out != nil {
				c.out.openSession(id)
			}
		}
	case p.method == acp.MethodSessionClose || p.method == acp.MethodSessionDelete:
		if c.sessions[p.session] {
			delete(c.sessions, p.session)
			c.srv.sessions.Add(-1)
		}
	case p.method == acp.MethodSessionList:
		return c.srv.filterList(line)
	}
	return line
}
