package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"
)

// Options configure a Conn. The zero value (or nil) is valid.
type Options struct {
	Logger         *slog.Logger // default: discard
	MaxMessageSize int          // default: DefaultMaxMessageSize
}

// Conn is the agent side of one ACP connection. It reads requests from the
// editor, dispatches them to the Agent, and implements Client for calls back.
//
// Concurrency: the read loop never blocks. Each request runs in its own
// goroutine with a context cancelled by $/cancel_request or by the connection
// closing; notifications run inline, in order. One writer owns the output.
type Conn struct {
	agent Agent
	rpc   atomic.Pointer[jsonrpc2.Conn]
	log   *slog.Logger
	seq   atomic.Uint64
	ready chan struct{}

	mu       sync.Mutex
	inflight map[string]context.CancelFunc // request id -> cancel
	methods  map[string]string             // request id -> method, of those in flight
	stream   *lineStream
	wg       sync.WaitGroup
	ordered  queue // the read loop's alone (order.go)

	// The dialect (v2conn.go): negotiated is the read loop's alone; v2 is
	// read by the outbound side too.
	negotiated bool
	v2         atomic.Bool
}

// NewConn starts serving the agent built by newAgent over r and w. closer, if
// not nil, is closed when the connection ends (typically stdin).
func NewConn(ctx context.Context, newAgent func(Client) Agent, r io.Reader, w io.Writer, closer io.Closer, opts *Options) *Conn {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Conn{log: o.Logger, inflight: map[string]context.CancelFunc{}, methods: map[string]string{}, ready: make(chan struct{})}
	c.agent = newAgent(c)
	stream := newLineStream(r, w, closer, o.MaxMessageSize, o.Logger, func(err error) {
		c.log.Warn("writing to the client failed; closing the connection", "err", err)
		<-c.ready
		c.rpc.Load().Close()
	})
	c.stream = stream
	c.rpc.Store(jsonrpc2.NewConn(ctx, stream, handler{c}, jsonrpc2.SetLogger(slogPrintf{o.Logger})))
	close(c.ready)
	return c
}

func (c *Conn) conn() *jsonrpc2.Conn {
	<-c.ready
	return c.rpc.Load()
}

// Done is closed when the connection has ended (EOF, error or Close).
func (c *Conn) Done() <-chan struct{} { return c.conn().DisconnectNotify() }

// Close ends the connection.
func (c *Conn) Close() error { return c.conn().Close() }

// InFlight returns the methods of the client's requests not yet answered.
func (c *Conn) InFlight() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.methods))
	for _, m := range c.methods {
		out = append(out, m)
	}
	return out
}

// Wait blocks until the connection has ended and every request handler has returned.
func (c *Conn) Wait() {
	<-c.Done()
	c.wg.Wait()
}

type slogPrintf struct{ l *slog.Logger }

func (s slogPrintf) Printf(format string, v ...any) {
	s.l.Debug(fmt.Sprintf(format, v...), "component", "jsonrpc2")
}

// ---- inbound ----

type handler struct{ c *Conn }

func (h handler) Handle(ctx context.Context, rc *jsonrpc2.Conn, req *jsonrpc2.Request) {
	h.c.handle(ctx, rc, req)
}

func (c *Conn) handle(ctx context.Context, rc *jsonrpc2.Conn, req *jsonrpc2.Request) {
	table, rerr := c.route(req)
	if rerr != nil {
		c.replyErr(ctx, rc, req.ID, rerr)
		return
	}
	m, known := table[req.Method]
	if req.Notif {
		switch {
		case req.Method == MethodCancelRequest:
			c.cancelRequest(req)
		case known && m.notification:
			c.runNotification(ctx, m, req)
		default:
			// Unknown notifications (and requests sent without an id) are ignored.
			c.log.Debug("ignored notification", "method", req.Method)
		}
		return
	}
	id := req.ID
	switch {
	case !known:
		c.replyErr(ctx, rc, id, Errorf(CodeMethodNotFound, "method not found: %s", req.Method))
		return
	case m.notification:
		c.replyErr(ctx, rc, id, Errorf(CodeInvalidRequest, "%s is a notification and must not carry an id", req.Method))
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	rctx, after := withAfterReply(rctx)
	var place *admission
	if m.ordered {
		rctx, place = c.ordered.enter(rctx)
	}
	key := id.String()
	c.mu.Lock()
	c.inflight[key] = cancel
	c.methods[key] = req.Method
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() {
			c.mu.Lock()
			delete(c.inflight, key)
			delete(c.methods, key)
			c.mu.Unlock()
			cancel()
			after.run()
		}()
		if place != nil {
			// Every earlier ordered request admits itself or returns, and
			// none waits for a later one, so this wait ends.
			<-place.prev
			defer place.admit()
		}
		result, err := c.call(rctx, m, req)
		if err != nil {
			c.replyErr(ctx, rc, id, toWireError(err))
			return
		}
		if err := rc.Reply(ctx, id, result); err != nil {
			c.log.Debug("reply failed", "method", req.Method, "err", err)
			return
		}
		after.run()
	}()
}

// call decodes params and runs the handler, turning a panic into -32603.
func (c *Conn) call(ctx context.Context, m method, req *jsonrpc2.Request) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("handler panicked", "method", req.Method, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, Errorf(CodeInternalError, "internal error in %s: %v", req.Method, r)
		}
	}()
	var raw json.RawMessage
	if req.Params != nil {
		raw = *req.Params
	}
	if m.handleConn != nil {
		return m.handleConn(c, ctx, raw)
	}
	return m.handle(ctx, c.agent, raw)
}

func (c *Conn) runNotification(ctx context.Context, m method, req *jsonrpc2.Request) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("notification handler panicked", "method", req.Method, "panic", r)
		}
	}()
	var raw json.RawMessage
	if req.Params != nil {
		raw = *req.Params
	}
	if _, err := m.handle(ctx, c.agent, raw); err != nil {
		c.log.Warn("bad notification", "method", req.Method, "err", err)
	}
}

func (c *Conn) cancelRequest(req *jsonrpc2.Request) {
	if req.Params == nil {
		return
	}
	var p CancelRequestNotification
	if json.Unmarshal(*req.Params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	var id jsonrpc2.ID
	if json.Unmarshal(p.RequestID, &id) != nil {
		return
	}
	c.mu.Lock()
	cancel := c.inflight[id.String()]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (c *Conn) replyErr(ctx context.Context, rc *jsonrpc2.Conn, id jsonrpc2.ID, e *Error) {
	werr := &jsonrpc2.Error{Code: int64(e.Code), Message: e.Message}
	if e.Data != nil {
		werr.SetError(e.Data)
	}
	if err := rc.ReplyWithError(ctx, id, werr); err != nil {
		c.log.Debug("error reply failed", "err", err)
	}
}

// ---- outbound (Client) ----

// SessionUpdate sends one session/update notification. It returns once the
// message is written, so updates sent before a response precede it on the wire.
//
// The line is encoded here rather than by jsonrpc2's Notify, which encodes
// the params, then the message, then the line again, compacting the update
// each time: updates are most of what goes out (a session/load replays
// thousands), and that cost three times the rest of a load. It goes through
// the same stream and lock as every other message, so order is kept.
func (c *Conn) SessionUpdate(ctx context.Context, sessionID string, u Update) error {
	select {
	case <-c.Done():
		return jsonrpc2.ErrClosed
	default:
	}
	params, err := SessionNotification{SessionID: sessionID, Update: u}.MarshalJSON()
	if err != nil {
		return err
	}
	line := make([]byte, 0, len(params)+64)
	line = append(line, `{"jsonrpc":"2.0","method":"`+MethodSessionUpdate+`","params":`...)
	line = append(line, params...)
	return c.stream.writeLine(append(line, "}\n"...))
}

func (c *Conn) RequestPermission(ctx context.Context, req *RequestPermissionRequest) (*RequestPermissionResponse, error) {
	var resp RequestPermissionResponse
	if err := c.callClient(ctx, MethodSessionRequestPermission, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

func (c *Conn) ReadTextFile(ctx context.Context, req *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	var resp ReadTextFileResponse
	if err := c.callClient(ctx, MethodFSReadTextFile, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

func (c *Conn) WriteTextFile(ctx context.Context, req *WriteTextFileRequest) error {
	var resp json.RawMessage
	return c.callClient(ctx, MethodFSWriteTextFile, req, &resp)
}

// CreateElicitation asks the user through the editor (elicitation/create).
func (c *Conn) CreateElicitation(ctx context.Context, req *CreateElicitationRequest) (*CreateElicitationResponse, error) {
	var resp CreateElicitationResponse
	if err := c.callClient(ctx, MethodElicitationCreate, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// CompleteElicitation tells the editor a URL elicitation is done.
func (c *Conn) CompleteElicitation(ctx context.Context, n *CompleteElicitationNotification) error {
	return c.conn().Notify(ctx, MethodElicitationComplete, n)
}

var _ Elicitor = (*Conn)(nil)

// callClient makes a request to the client. When ctx ends first it tells the
// client with $/cancel_request and returns the context's error.
func (c *Conn) callClient(ctx context.Context, method string, params, result any) error {
	rc := c.conn()
	id := jsonrpc2.ID{Num: c.seq.Add(1)}
	w, err := rc.DispatchCall(ctx, method, params, jsonrpc2.PickID(id))
	if err != nil {
		return err
	}
	err = w.Wait(ctx, result)
	if ctx.Err() != nil && err != nil {
		_ = rc.Notify(context.WithoutCancel(ctx), MethodCancelRequest, CancelRequestNotification{RequestID: json.RawMessage(id.String())})
		return ctx.Err()
	}
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) {
		return &Error{Code: int(rpcErr.Code), Message: rpcErr.Message}
	}
	return err
}
