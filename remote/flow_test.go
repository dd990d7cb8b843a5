package remote

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// TestHTTPSession: initialize, a session, a prompt whose permission
// request arrives on the session stream and is answered by POST, the
// prompt's answer on the session stream.
func TestHTTPSession(t *testing.T) {
	s := newTestServer(t, Options{})
	c := newClient(t, s.URL, "")
	c.initialize()
	sid := c.newSession(s.root)
	c.post(sid, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"hi"}]}}`)
	c.next("the chunk", method("session/update"))
	ask := c.next("the permission request", method("session/request_permission"))
	c.post(sid, `{"jsonrpc":"2.0","id":`+string(ask.ID)+`,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`)
	if m := c.next("the prompt's answer", answerTo("2")); m.Error != nil || !strings.Contains(string(m.Result), "end_turn") {
		t.Fatalf("prompt: %+v", m)
	}
	if got := <-s.agents.turnDone; got != "selectedallow" {
		t.Errorf("outcome %q", got)
	}
	if code := status(t, c.req("DELETE", "", nil)); code != 202 {
		t.Errorf("DELETE: %d", code)
	}
	waitFor(t, "the connection to end", func() bool { return s.Stats() == Stats{} })
}

// TestDroppedConnectionTurnFinishes: the client goes while its turn waits
// for a permission answer: the request is answered "cancelled" here, the
// turn runs to its end, and only then does the agent shut down.
func TestDroppedConnectionTurnFinishes(t *testing.T) {
	for _, transport := range []string{"http", "websocket"} {
		t.Run(transport, func(t *testing.T) {
			s := newTestServer(t, Options{})
			var drop func()
			switch transport {
			case "http":
				c := newClient(t, s.URL, "")
				c.initialize()
				sid := c.newSession(s.root)
				c.post(sid, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"wait"}]}}`)
				c.next("the permission request", method("session/request_permission"))
				drop = func() { status(t, c.req("DELETE", "", nil)) }
			case "websocket":
				w := dialWS(t, s.URL, nil)
				w.send(initBody)
				w.next("initialize answer", answerTo("0"))
				sid := w.newSession(s.root)
				w.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"wait"}]}}`)
				w.next("the permission request", method("session/request_permission"))
				drop = func() { w.ws.CloseNow() }
			}
			drop()
			// The permission request is answered for the gone client; the
			// turn is still running (it waits for release).
			waitFor(t, "the client to be gone", func() bool {
				c := s.conns1()
				return c != nil && c.isGone()
			})
			if n := s.agents.shutdowns.Load(); n != 0 {
				t.Fatalf("the agent shut down with its turn running")
			}
			close(s.agents.release)
			if got := <-s.agents.turnDone; got != "cancelled" {
				t.Errorf("the permission outcome: %q, want cancelled", got)
			}
			waitFor(t, "the agent to shut down", func() bool { return s.agents.shutdowns.Load() == 1 })
			waitFor(t, "the connection to go", func() bool { return s.Stats() == Stats{} })
		})
	}
}

// conns1 is the one live connection, if any.
func (s *Server) conns1() *conn {
	var one *conn
	s.each(func(c *conn) { one = c })
	return one
}

func (c *conn) isGone() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gone
}

// TestSessionListFiltered: a remote client lists only sessions under the
// roots.
func TestSessionListFiltered(t *testing.T) {
	s := newTestServer(t, Options{})
	line := []byte(`{"jsonrpc":"2.0","id":3,"result":{"sessions":[{"sessionId":"a","cwd":` + quote(s.root) + `},{"sessionId":"b","cwd":"/etc"}],"nextCursor":"c"}}` + "\n")
	var got struct {
		Result struct {
			Sessions   []struct{ SessionID string }
			NextCursor string
		}
	}
	if err := json.Unmarshal(s.filterList(line), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Result.Sessions) != 1 || got.Result.Sessions[0].SessionID != "a" || got.Result.NextCursor != "c" {
		t.Errorf("filtered: %+v", got)
	}
}

// wsClient is a WebSocket client for the tests.
type wsClient struct {
	t    *testing.T
	ws   *websocket.Conn
	msgs chan rpc
	resp *http.Response
	err  error // why reading ended, once msgs is closed
}

func dialWS(t *testing.T, url string, hdr http.Header) *wsClient {
	t.Helper()
	ws, resp, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(url, "http")+Path, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	ws.SetReadLimit(1 << 24)
	w := &wsClient{t: t, ws: ws, msgs: make(chan rpc, 1024), resp: resp}
	go func() {
		defer close(w.msgs)
		for {
			_, b, err := ws.Read(context.Background())
			if err != nil {
				w.err = err
				return
			}
			var m rpc
			if json.Unmarshal(b, &m) == nil {
				w.msgs <- m
			}
		}
	}()
	t.Cleanup(func() { ws.CloseNow() })
	return w
}

func (w *wsClient) send(s string) {
	w.t.Helper()
	if err := w.ws.Write(w.t.Context(), websocket.MessageText, []byte(s)); err != nil {
		w.t.Fatal(err)
	}
}

func (w *wsClient) next(what string, f func(rpc) bool) rpc {
	w.t.Helper()
	c := &client{t: w.t, msgs: w.msgs}
	return c.next(what, f)
}

func (w *wsClient) newSession(dir string) string {
	w.t.Helper()
	w.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":` + quote(dir) + `,"mcpServers":[]}}`)
	var res struct{ SessionID string }
	if m := w.next("session/new answer", answerTo("1")); m.Error != nil || json.Unmarshal(m.Result, &res) != nil {
		w.t.Fatalf("session/new: %+v", m)
	}
	return res.SessionID
}

// TestWebSocketSession: the same session over one socket; the connection
// id comes with the 101.
func TestWebSocketSession(t *testing.T) {
	s := newTestServer(t, Options{Token: "tok"})
	w := dialWS(t, s.URL, http.Header{"Authorization": {"Bearer tok"}})
	if w.resp.Header.Get(HeaderConnectionID) == "" {
		t.Error("101 without " + HeaderConnectionID)
	}
	w.send(initBody)
	w.next("initialize answer", answerTo("0"))
	sid := w.newSession(s.root)
	w.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"hi"}]}}`)
	ask := w.next("the permission request", method("session/request_permission"))
	w.send(`{"jsonrpc":"2.0","id":` + string(ask.ID) + `,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`)
	w.next("the prompt's answer", answerTo("2"))
	if got := <-s.agents.turnDone; got != "selectedallow" {
		t.Errorf("outcome %q", got)
	}
	w.send(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	if m := w.next("refusal", answerTo("3")); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("cwd outside the roots over WebSocket: %+v", m)
	}
	w.ws.Close(websocket.StatusNormalClosure, "")
	waitFor(t, "the connection to end", func() bool { return s.Stats() == Stats{} })
}

// TestHostileWebSocket: the upgrade is guarded like any request; the
// first message must be initialize; an oversized message closes the
// socket (1009).
func TestHostileWebSocket(t *testing.T) {
	s := newTestServer(t, Options{Token: "tok", MaxBody: 1024})
	auth := http.Header{"Authorization": {"Bearer tok"}}
	for _, tc := range []struct {
		name string
		hdr  http.Header
		want int
	}{
		{"no token", nil, 401},
		{"foreign Origin", http.Header{"Authorization": {"Bearer tok"}, "Origin": {"https://evil.example"}}, 403},
		{"rebinding Host", http.Header{"Authorization": {"Bearer tok"}, "Host": {"evil.example"}}, 403},
	} {
		u := "ws" + strings.TrimPrefix(s.URL, "http") + Path
		opts := &websocket.DialOptions{HTTPHeader: tc.hdr}
		if h := tc.hdr.Get("Host"); h != "" {
			opts.Host = h
		}
		_, resp, err := websocket.Dial(t.Context(), u, opts)
		if err == nil || resp == nil || resp.StatusCode != tc.want {
			t.Errorf("%s: %v %v, want %d", tc.name, err, resp, tc.want)
		}
	}

	w := dialWS(t, s.URL, auth)
	w.send(`{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}`)
	if m := w.next("refusal", answerTo("1")); m.Error == nil || m.Error.Code != -32600 {
		t.Errorf("a first message other than initialize: %+v", m)
	}
	w2 := dialWS(t, s.URL, auth)
	w2.send(initBody)
	w2.next("initialize answer", answerTo("0"))
	w2.ws.Write(t.Context(), websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"x","params":"`+strings.Repeat("a", 2000)+`"}`))
	for range w2.msgs {
	}
	if websocket.CloseStatus(w2.err) != websocket.StatusMessageTooBig {
		t.Errorf("oversized message: %v, want close 1009", w2.err)
	}
	waitFor(t, "the connections to end", func() bool { return s.Stats() == Stats{} })
}

// TestHTTP2Cleartext: the RFD asks for HTTP/2 (many POSTs beside long
// GETs on one connection); without TLS a client that knows it may speak
// it from the start, and the streams work over it.
func TestHTTP2Cleartext(t *testing.T) {
	s := newTestServer(t, Options{})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	c := newClient(t, s.URL, "")
	c.hc = &http.Client{Transport: &http.Transport{Protocols: &p}}
	resp := c.req("POST", initBody, nil)
	readAll(resp)
	if resp.ProtoMajor != 2 {
		t.Fatalf("initialize over %s, want HTTP/2", resp.Proto)
	}
	c.conn = resp.Header.Get(HeaderConnectionID)
	c.stream("")
	sid := c.newSession(s.root)
	c.post(sid, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"hi"}]}}`)
	ask := c.next("the permission request", method("session/request_permission"))
	c.post(sid, `{"jsonrpc":"2.0","id":`+string(ask.ID)+`,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`)
	c.next("the prompt's answer", answerTo("2"))
}
