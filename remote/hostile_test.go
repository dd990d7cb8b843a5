package remote

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestHostileHTTP: every request an attacker (or a broken client) can make
// gets its status, and changes nothing: no connection, no session, no
// agent made.
func TestHostileHTTP(t *testing.T) {
	const token = "s3cret-token-value"
	s := newTestServer(t, Options{Token: token, Origins: []string{"https://app.example"}, MaxBody: 4096})
	good := newClient(t, s.URL, token)
	good.initialize()
	before := s.Stats()

	type hdr = map[string]string
	for _, tc := range []struct {
		name   string
		method string
		body   string
		conn   string // "good": the live connection's id
		token  string
		h      hdr
		want   int
	}{
		{name: "no token", method: "POST", body: initBody, want: 401},
		{name: "wrong token", method: "POST", body: initBody, token: "s3cret-token-valuX", want: 401},
		{name: "token as another scheme", method: "POST", body: initBody, h: hdr{"Authorization": "Basic " + token}, want: 401},
		{name: "token prefix", method: "POST", body: initBody, token: "s3cret", want: 401},
		{name: "foreign Origin", method: "POST", body: initBody, token: token, h: hdr{"Origin": "https://evil.example"}, want: 403},
		{name: "null Origin", method: "POST", body: initBody, token: token, h: hdr{"Origin": "null"}, want: 403},
		{name: "Origin with a path", method: "POST", body: initBody, token: token, h: hdr{"Origin": "https://app.example/x"}, want: 403},
		{name: "loopback Origin not enabled", method: "POST", body: initBody, token: token, h: hdr{"Origin": "http://localhost:3000"}, want: 403},
		{name: "rebinding Host", method: "POST", body: initBody, token: token, h: hdr{"Host": "evil.example:8741"}, want: 403},
		{name: "rebinding Host on GET", method: "GET", conn: "good", token: token, h: hdr{"Host": "attacker.test", "Accept": "text/event-stream"}, want: 403},
		{name: "Host on health", method: "GET", h: hdr{"Host": "evil.example", "X-Path": "/health"}, want: 403},
		{name: "oversized body", method: "POST", body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`, token: token, want: 413},
		{name: "oversized body on a connection", method: "POST", conn: "good", body: `{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("a", 5000) + `"}`, token: token, want: 413},
		{name: "unknown connection POST", method: "POST", conn: "0d1e2f3a-0000-4000-8000-000000000000", body: `{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}`, token: token, want: 404},
		{name: "unknown connection GET", method: "GET", conn: "nope", token: token, h: hdr{"Accept": "text/event-stream"}, want: 404},
		{name: "unknown connection DELETE", method: "DELETE", conn: "nope", token: token, want: 404},
		{name: "not initialize first", method: "POST", body: `{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}`, token: token, want: 400},
		{name: "not JSON", method: "POST", conn: "good", body: `{"jsonrpc":`, token: token, want: 400},
		{name: "batch", method: "POST", conn: "good", body: `[{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}]`, token: token, want: 501},
		{name: "wrong content type", method: "POST", body: initBody, token: token, h: hdr{"Content-Type": "text/plain"}, want: 415},
		{name: "GET without event-stream", method: "GET", conn: "good", token: token, want: 406},
		{name: "GET without connection", method: "GET", token: token, h: hdr{"Accept": "text/event-stream"}, want: 400},
		{name: "second connection stream", method: "GET", conn: "good", token: token, h: hdr{"Accept": "text/event-stream"}, want: 409},
		{name: "session header and params differ", method: "POST", conn: "good", body: `{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"a","prompt":[]}}`, token: token, h: hdr{"Acp-Session-Id": "b"}, want: 400},
		{name: "session request without session", method: "POST", conn: "good", body: `{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"prompt":[]}}`, token: token, want: 400},
		{name: "other path", method: "GET", token: token, h: hdr{"X-Path": "/admin"}, want: 404},
		{name: "health needs no token", method: "GET", h: hdr{"X-Path": "/health"}, want: 200},
		{name: "PUT", method: "PUT", token: token, want: 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, s.URL, tc.token)
			switch tc.conn {
			case "good":
				c.conn = good.conn
			default:
				c.conn = tc.conn
			}
			h := hdr{}
			for k, v := range tc.h {
				h[k] = v
			}
			if p, ok := h["X-Path"]; ok {
				c.path = p
				delete(h, "X-Path")
			}
			resp := c.req(tc.method, tc.body, h)
			body := readAll(resp)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, tc.want, body)
			}
			if strings.Contains(body, token) {
				t.Errorf("the answer repeats the token: %s", body)
			}
			if resp.StatusCode == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
	if diff := cmp.Diff(before, s.Stats()); diff != "" {
		t.Errorf("hostile requests changed the server (-before +after):\n%s", diff)
	}
	if n := s.agents.sessions.Load(); n != 0 {
		t.Errorf("%d sessions made", n)
	}
}

// TestOriginsAllowed: an allowed origin passes and may read the ACP
// headers; with LoopbackOrigins, a page served from localhost passes too.
func TestOriginsAllowed(t *testing.T) {
	s := newTestServer(t, Options{Origins: []string{"https://App.Example"}, LoopbackOrigins: true})
	for _, origin := range []string{"https://app.example", "http://localhost:5173", "http://127.0.0.1", "http://[::1]:8080"} {
		c := newClient(t, s.URL, "")
		resp := c.req("POST", initBody, map[string]string{"Origin": origin})
		readAll(resp)
		if resp.StatusCode != 200 {
			t.Errorf("Origin %s: %d", origin, resp.StatusCode)
			continue
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != origin {
			t.Errorf("Origin %s: Access-Control-Allow-Origin %q", origin, got)
		}
		if !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), HeaderConnectionID) {
			t.Errorf("Origin %s: the connection id is not exposed", origin)
		}
	}
	// A preflight is answered without a token (browsers send none).
	c := newClient(t, s.URL, "")
	if code := status(t, c.req("OPTIONS", "", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST"})); code != http.StatusNoContent {
		t.Errorf("preflight: %d", code)
	}
}

// TestHostAllowList: a configured name passes, with or without port.
func TestHostAllowList(t *testing.T) {
	s := newTestServer(t, Options{Hosts: []string{"devbox.example", "10.1.2.3"}})
	for host, want := range map[string]int{
		"devbox.example:8741": 200, "DEVBOX.example": 200, "10.1.2.3:1": 200, "localhost:9": 200, "[::1]:8741": 200,
		"devbox.example.evil": 403, "10.1.2.4": 403,
	} {
		c := newClient(t, s.URL, "")
		c.path = "/health"
		resp := c.req("GET", "", map[string]string{"Host": host})
		readAll(resp)
		if resp.StatusCode != want {
			t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestCwdOutsideRoots: a session's directories must lie under the roots;
// a link under a root that points out of it is out.
func TestCwdOutsideRoots(t *testing.T) {
	s := newTestServer(t, Options{})
	outside := t.TempDir()
	inside := filepath.Join(s.root, "project")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(s.root, "escape")
	if err := os.Symlink(outside, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	c := newClient(t, s.URL, "")
	c.initialize()
	for i, tc := range []struct {
		params string
		ok     bool
	}{
		{`{"cwd":` + quote(inside) + `,"mcpServers":[]}`, true},
		{`{"cwd":` + quote(s.root) + `,"mcpServers":[]}`, true},
		{`{"cwd":` + quote(filepath.Join(inside, "not-yet")) + `,"mcpServers":[]}`, true},
		{`{"cwd":` + quote(outside) + `,"mcpServers":[]}`, false},
		{`{"cwd":` + quote(filepath.Join(inside, "..", "..")) + `,"mcpServers":[]}`, false},
		{`{"cwd":` + quote(link) + `,"mcpServers":[]}`, false},
		{`{"cwd":` + quote(filepath.Join(link, "sub")) + `,"mcpServers":[]}`, false},
		{`{"cwd":"relative/dir","mcpServers":[]}`, false},
		{`{"cwd":"","mcpServers":[]}`, false},
		{`{"cwd":` + quote(inside) + `,"additionalDirectories":[` + quote(outside) + `],"mcpServers":[]}`, false},
		{`{"cwd":` + quote(s.root+"-sibling") + `,"mcpServers":[]}`, false},
	} {
		id := 10 + i
		c.post("", `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"session/new","params":`+tc.params+`}`)
		m := c.next("answer", answerTo(strconv.Itoa(id)))
		if tc.ok != (m.Error == nil) {
			t.Errorf("%s: error %v, want ok=%v", tc.params, m.Error, tc.ok)
		}
		if m.Error != nil && m.Error.Code != -32602 {
			t.Errorf("%s: code %d, want -32602", tc.params, m.Error.Code)
		}
	}
	// session/load and resume are screened the same way.
	c.post("x", `{"jsonrpc":"2.0","id":99,"method":"session/load","params":{"sessionId":"x","cwd":`+quote(outside)+`,"mcpServers":[]}}`)
	if m := c.next("load answer", answerTo("99")); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("session/load outside the roots: %+v", m)
	}
}

// TestLimits: connections and sessions past the limits get 503; a slow
// client (nothing read, output past MaxBuffered) is dropped, and its turn
// still ends.
func TestLimits(t *testing.T) {
	s := newTestServer(t, Options{MaxConnections: 2, MaxSessions: 2})
	a, b := newClient(t, s.URL, ""), newClient(t, s.URL, "")
	a.initialize()
	b.initialize()
	if code := status(t, newClient(t, s.URL, "").req("POST", initBody, nil)); code != 503 {
		t.Errorf("a third connection: %d, want 503", code)
	}
	a.newSession(s.root)
	b.newSession(s.root)
	if code := status(t, a.req("POST", `{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":`+quote(s.root)+`,"mcpServers":[]}}`, nil)); code != 503 {
		t.Errorf("a third session: %d, want 503", code)
	}
	// Closing a connection frees its place and its sessions'.
	if code := status(t, a.req("DELETE", "", nil)); code != 202 {
		t.Fatalf("DELETE: %d", code)
	}
	waitFor(t, "the connection to close", func() bool { return s.Stats() == Stats{Connections: 1, Sessions: 1} })
	c := newClient(t, s.URL, "")
	c.initialize()
	c.newSession(s.root)
}

// TestTooManyRequests: a connection's requests running at once are
// bounded (each holds a goroutine of the agent's): past maxPending, 503.
func TestTooManyRequests(t *testing.T) {
	s := newTestServer(t, Options{})
	c := newClient(t, s.URL, "")
	c.initialize()
	sid := c.newSession(s.root)
	for i := range maxPending {
		c.post(sid, `{"jsonrpc":"2.0","id":`+strconv.Itoa(100+i)+`,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"wait"}]}}`)
	}
	if code := status(t, c.req("POST", `{"jsonrpc":"2.0","id":99,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"wait"}]}}`, map[string]string{HeaderSessionID: sid})); code != 503 {
		t.Errorf("request %d at once: %d, want 503", maxPending+1, code)
	}
	close(s.agents.release)
}

func TestSlowClientDropped(t *testing.T) {
	s := newTestServer(t, Options{MaxBuffered: 64 << 10})
	c := newClient(t, s.URL, "")
	c.initialize()
	// A session whose stream the client never opens: what the turn says
	// waits in its mailbox, past the bound, and the client is dropped.
	sid := c.newSessionUnread(s.root)
	c.post(sid, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"flood"}]}}`)
	waitFor(t, "the slow connection to be dropped", func() bool { return s.Stats().Connections == 0 })
	if n := s.agents.shutdowns.Load(); n != 1 {
		t.Errorf("%d agents shut down, want 1", n)
	}
}

// TestIdleConnectionClosed: a connection nobody listens to goes.
func TestIdleConnectionClosed(t *testing.T) {
	s := newTestServer(t, Options{IdleTimeout: 20 * 1e6})
	c := newClient(t, s.URL, "")
	resp := c.req("POST", initBody, nil)
	readAll(resp)
	waitFor(t, "the idle connection to close", func() bool { return s.Stats().Connections == 0 })
	c.conn = resp.Header.Get(HeaderConnectionID)
	if code := status(t, c.req("POST", `{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}`, nil)); code != 404 {
		t.Errorf("POST on the closed connection: %d, want 404", code)
	}
}

// TestSlowBodyCut: a body that trickles in is cut off after WriteTimeout
// instead of holding its connection for good.
func TestSlowBodyCut(t *testing.T) {
	s := newTestServer(t, Options{WriteTimeout: 50 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":")
	conn.SetReadDeadline(time.Now().Add(never))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a trickling body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a trickling body: %d, want 400", resp.StatusCode)
	}
}

// TestStalledReaderDropped: a client whose session stream is open but
// never read: the kernel's buffers fill, a write waits past WriteTimeout
// (or the mailbox passes its bound), and the client is dropped; the
// server's memory for it never grows past the bound.
func TestStalledReaderDropped(t *testing.T) {
	s := newTestServer(t, Options{MaxBuffered: 256 << 10, WriteTimeout: 100 * time.Millisecond})
	c := newClient(t, s.URL, "")
	c.initialize()
	sid := c.newSessionUnread(s.root)
	raw, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// A small receive window, so the server's writes block soon.
	if tc, ok := raw.(*net.TCPConn); ok {
		tc.SetReadBuffer(4096)
	}
	fmt.Fprintf(raw, "GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n%s: %s\r\n%s: %s\r\n\r\n",
		HeaderConnectionID, c.conn, HeaderSessionID, sid)
	c.post(sid, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"flood"}]}}`)
	waitFor(t, "the stalled reader to be dropped", func() bool { return s.Stats().Connections == 0 })
}
