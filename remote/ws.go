package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/acp-bridge/acp-bridge/acp"
)

// The WebSocket variant: GET /acp with Upgrade: websocket opens a
// connection (101 with Acp-Connection-Id); one JSON-RPC message per text
// frame each way, binary frames ignored; the connection ends with the
// socket. The guard has checked Host, Origin and token before the upgrade
// (which is why the library's own Origin check is skipped: one rule, in
// guard.go, for HTTP and WebSocket alike).

const transportWebSocket = "websocket"

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

func (s *Server) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	c, err := s.open(transportWebSocket, r.RemoteAddr)
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	w.Header().Set(HeaderConnectionID, c.id)
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		c.end("the upgrade failed")
		return
	}
	ws.SetReadLimit(s.o.MaxBody)
	out := newSocket(ws, s.o.MaxBuffered)
	c.setSink(out)
	c.listen(1)
	// The writer outlives this handler: it writes what is queued (the
	// refusal of a bad first message, say) before closing the socket.
	// A server closing since open has ended c, or is about to.
	if !s.spawn(func() { out.run(s.ctx, c, s) }) {
		ws.Close(websocket.StatusGoingAway, "server closing")
		c.end("server closing")
		return
	}
	for {
		typ, data, err := ws.Read(s.ctx)
		if err != nil {
			reason := "websocket closed"
			if websocket.CloseStatus(err) == websocket.StatusMessageTooBig {
				reason = "a message exceeded the size limit"
			}
			c.listen(-1)
			c.drop(reason)
			return
		}
		if typ != websocket.MessageText {
			continue
		}
		if err := c.deliver(data, "", nil); err != nil {
			c.reply("", idOf(data), deliverRPCError(err))
			if errors.Is(err, errNotInitialize) || errors.Is(err, errGone) {
				c.listen(-1)
				c.drop(err.Error())
				return
			}
		}
	}
}

// idOf is the id of a message that could not be delivered, if it has one.
func idOf(data []byte) json.RawMessage {
	var m message
	if json.Unmarshal(data, &m) == nil && m.hasID() {
		return m.ID
	}
	return json.RawMessage("null")
}

// deliverRPCError is a refused message's JSON-RPC answer (WebSocket has
// no status to carry it).
func deliverRPCError(err error) *acp.Error {
	switch err {
	case errBadJSON:
		return &acp.Error{Code: acp.CodeParseError, Message: err.Error()}
	case errTooManySessions, errTooManyRequests, errBusy, errGone:
		return &acp.Error{Code: acp.CodeInternalError, Message: err.Error()}
	}
	return &acp.Error{Code: acp.CodeInvalidRequest, Message: err.Error()}
}

// socket is a WebSocket connection's outbound queue: streams with the
// connection's mailbox alone (there are no session streams), written by
// one goroutine (run) that also pings the client.
type socket struct {
	*streams
	ws  *websocket.Conn
	box *mailbox
}

func newSocket(ws *websocket.Conn, limit int) *socket {
	st := newStreams(limit, 0)
	return &socket{streams: st, ws: ws, box: st.boxes[""]}
}

func (s *socket) openSession(string) {}

// run writes what is queued, each frame within the write timeout, and
// pings every KeepAlive (a half-open socket fails its ping); a client that
// cannot be written to or does not answer is dropped.
func (s *socket) run(ctx context.Context, c *conn, srv *Server) {
	ping := time.NewTicker(srv.o.KeepAlive)
	defer ping.Stop()
	fail := func(reason string) {
		c.drop(reason)
		s.ws.CloseNow()
	}
	flush := func() bool {
		for _, l := range s.take(s.box) {
			wctx, cancel := context.WithTimeout(ctx, srv.o.WriteTimeout)
			err := s.ws.Write(wctx, websocket.MessageText, bytes.TrimRight(l, "\n"))
			cancel()
			if err != nil {
				fail("the websocket could not be written")
				return false
			}
		}
		return true
	}
	for {
		if !flush() {
			return
		}
		select {
		case <-s.box.wake:
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, srv.o.WriteTimeout)
			err := s.ws.Ping(pctx)
			cancel()
			if err != nil {
				fail("the websocket did not answer a ping")
				return
			}
		case <-s.done:
			if flush() {
				s.ws.Close(websocket.StatusNormalClosure, "")
			}
			return
		case <-ctx.Done():
			s.ws.Close(websocket.StatusGoingAway, "server closing")
			return
		}
	}
}
