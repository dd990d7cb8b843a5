package remote

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The attacks of a hostile network on every way in (POST, the SSE GET,
// DELETE, the WebSocket upgrade), beside hostile_test.go's statuses.

const attackToken = "s3cret-Token-Value-0123"

// attack is one request's deviation from a good one.
type attack struct {
	name  string
	auth  []string          // Authorization values; nil: the good token
	query string            // added to the URL
	host  string            // the Host header; "": the server's own
	h     map[string]string // other headers
	want  int               // the refusal, or 0: through the guard
}

var attacks = []attack{
	{name: "no token", auth: []string{}, want: 401},
	{name: "wrong token", auth: []string{"Bearer s3cret-Token-Value-0124"}, want: 401},
	{name: "token in another case", auth: []string{"Bearer " + strings.ToLower(attackToken)}, want: 401},
	{name: "token twice, one wrong", auth: []string{"Bearer " + attackToken, "Bearer x"}, want: 401},
	{name: "token in the query", auth: []string{}, query: "?token=" + attackToken + "&access_token=" + attackToken, want: 401},
	{name: "token in a cookie", auth: []string{}, h: map[string]string{"Cookie": "token=" + attackToken}, want: 401},
	{name: "token as a WebSocket subprotocol", auth: []string{}, h: map[string]string{"Sec-WebSocket-Protocol": "bearer, " + attackToken}, want: 401},
	{name: "scheme in lower case", auth: []string{"bearer " + attackToken}, want: 0}, // RFC 9110: schemes are case-insensitive
	{name: "rebinding Host", host: "evil.example:8741", want: 403},
	{name: "Host a loopback name's suffix", host: "localhost.evil.example", want: 403},
	{name: "Host an address's prefix", host: "127.0.0.1.nip.io", want: 403},
	// The port of Host is not checked: a TLS proxy in front changes it, and
	// a rebinding page is told apart by its name (README, serve section).
	{name: "Host with another port", host: "127.0.0.1:1", want: 0},
	{name: "Host in upper case", host: "LOCALHOST:8741", want: 0},
	{name: "null Origin", h: map[string]string{"Origin": "null"}, want: 403},
	{name: "foreign Origin", h: map[string]string{"Origin": "https://evil.example"}, want: 403},
	{name: "Origin a suffix of an allowed one", h: map[string]string{"Origin": "https://app.example.evil.example"}, want: 403},
	{name: "Origin with another scheme", h: map[string]string{"Origin": "http://app.example"}, want: 403},
	{name: "allowed Origin", h: map[string]string{"Origin": "https://app.example"}, want: 0},
}

// do sends method to s with a as its deviation; ws makes it a WebSocket
// upgrade. The connection id is conn's.
func (a attack) do(t *testing.T, s *testServer, method, body, conn string, ws bool) *http.Response {
	t.Helper()
	r, err := http.NewRequestWithContext(t.Context(), method, s.URL+Path+a.query, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if conn != "" {
		r.Header.Set(HeaderConnectionID, conn)
	}
	if method == "GET" && !ws {
		r.Header.Set("Accept", "text/event-stream")
	}
	if ws {
		r.Header.Set("Connection", "Upgrade")
		r.Header.Set("Upgrade", "websocket")
		r.Header.Set("Sec-WebSocket-Version", "13")
		r.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	}
	auth := a.auth
	if auth == nil {
		auth = []string{"Bearer " + attackToken}
	}
	r.Header["Authorization"] = auth
	for k, v := range a.h {
		r.Header.Set(k, v)
	}
	if a.host != "" {
		r.Host = a.host
	}
	// A transport of its own: an upgraded or streaming connection is not
	// left in a shared pool.
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Do(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestAttacksOnEveryWayIn: each attack on POST (initialize and on a
// connection), the SSE GET, DELETE and the WebSocket upgrade gets its
// refusal and changes nothing; what passes the guard works.
func TestAttacksOnEveryWayIn(t *testing.T) {
	s := newTestServer(t, Options{Token: attackToken, Origins: []string{"https://app.example"}})
	good := newClient(t, s.URL, attackToken)
	good.initialize()
	for _, way := range []string{"POST initialize", "POST", "GET", "DELETE", "WebSocket"} {
		for _, a := range attacks {
			t.Run(way+"/"+a.name, func(t *testing.T) {
				before := s.Stats()
				var resp *http.Response
				switch way {
				case "POST initialize":
					resp = a.do(t, s, "POST", initBody, "", false)
				case "POST":
					// An id of its own: one still running under the same id
					// on the connection is refused (400), and the last
					// case's session/list may not have been answered yet.
					resp = a.do(t, s, "POST", `{"jsonrpc":"2.0","id":"list-`+strings.ReplaceAll(a.name, `"`, "")+`","method":"session/list","params":{}}`, good.conn, false)
				case "GET":
					// The connection's stream is the good client's: a
					// session's stream is free to take.
					b := a
					b.h = map[string]string{HeaderSessionID: "probe-" + a.name}
					for k, v := range a.h {
						b.h[k] = v
					}
					resp = b.do(t, s, "GET", "", good.conn, false)
				case "DELETE":
					resp = a.do(t, s, "DELETE", "", "0d1e2f3a-0000-4000-8000-000000000000", false)
				case "WebSocket":
					resp = a.do(t, s, "GET", "", "", true)
				}
				resp.Body.Close()
				if a.want != 0 {
					if resp.StatusCode != a.want {
						t.Fatalf("status %d, want %d", resp.StatusCode, a.want)
					}
					if diff := s.Stats(); diff != before {
						t.Errorf("a refused request changed the server: %+v, then %+v", before, diff)
					}
					return
				}
				want := map[string]int{"POST initialize": 200, "POST": 202, "GET": 200, "DELETE": 404, "WebSocket": 101}[way]
				if resp.StatusCode != want {
					t.Fatalf("status %d, want %d", resp.StatusCode, want)
				}
				if id := resp.Header.Get(HeaderConnectionID); id != "" && way != "POST" {
					// A connection made: end it, so the next case starts
					// from the same counts.
					if c := s.lookup(id); c != nil {
						c.end("test")
					}
				}
			})
		}
	}
	if n := s.agents.sessions.Load(); n != 0 {
		t.Errorf("%d sessions made", n)
	}
	if s.lookup(good.conn) == nil {
		t.Error("the good connection was ended by an attack")
	}
}

// TestMissingHost: HTTP/1.0 may leave Host out; such a request is not from
// a name on the list, so it is refused (HTTP/1.1 without Host is Go's 400).
func TestMissingHost(t *testing.T) {
	s := newTestServer(t, Options{})
	for _, tc := range []struct {
		req  string
		want int
	}{
		{"GET /health HTTP/1.0\r\n\r\n", 403},
		{"POST /acp HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(initBody)) + "\r\n\r\n" + initBody, 403},
		{"POST /acp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(initBody)) + "\r\n\r\n" + initBody, 400},
		{"GET /health HTTP/1.1\r\nHost: \r\n\r\n", 403},
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(never))
		conn.Write([]byte(tc.req))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		conn.Close()
		if err != nil || resp.StatusCode != tc.want {
			t.Errorf("%q: %v %v, want %d", tc.req, resp, err, tc.want)
		}
	}
	if s.Stats() != (Stats{}) {
		t.Errorf("a request without Host made a connection: %+v", s.Stats())
	}
}

// TestCrossSitePost: a page on another site can POST text/plain without a
// preflight (a CORS simple request); the browser sends its Origin, which
// is refused, and a client without one is refused for the type.
func TestCrossSitePost(t *testing.T) {
	s := newTestServer(t, Options{})
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"https://evil.example", 403},
		{"null", 403},
		{"", 415},
	} {
		c := newClient(t, s.URL, "")
		h := map[string]string{"Content-Type": "text/plain"}
		if tc.origin != "" {
			h["Origin"] = tc.origin
		}
		resp := c.req("POST", initBody, h)
		if body := readAll(resp); resp.StatusCode != tc.want || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("Origin %q: %d %q (allow-origin %q), want %d", tc.origin, resp.StatusCode, body, resp.Header.Get("Access-Control-Allow-Origin"), tc.want)
		}
	}
	if s.Stats() != (Stats{}) {
		t.Errorf("a cross-site POST made a connection: %+v", s.Stats())
	}
}

// TestBatchAnswered501: a JSON-RPC batch is answered 501 (the RFD) with
// a JSON-RPC error body, on a connection or as its first message; over
// WebSocket it is a JSON-RPC error frame.
func TestBatchAnswered501(t *testing.T) {
	s := newTestServer(t, Options{})
	good := newClient(t, s.URL, "")
	good.initialize()
	batch := ` [{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}]`
	for _, conn := range []string{"", good.conn} {
		c := newClient(t, s.URL, "")
		c.conn = conn
		for _, body := range []string{batch, "[" + initBody + "]"} {
			resp := c.req("POST", body, nil)
			raw := readAll(resp)
			var m rpc
			if resp.StatusCode != http.StatusNotImplemented || resp.Header.Get("Content-Type") != "application/json" ||
				json.Unmarshal([]byte(raw), &m) != nil || m.Error == nil || m.Error.Code != -32600 || string(m.ID) != "null" ||
				!strings.Contains(m.Error.Message, "batches are not supported") {
				t.Errorf("a batch (connection %q): %d %s %q, want 501 with a JSON-RPC error", conn, resp.StatusCode, resp.Header.Get("Content-Type"), raw)
			}
		}
	}
	w := dialWS(t, s.URL, nil)
	w.send(initBody)
	w.next("initialize answer", answerTo("0"))
	w.send(batch)
	if m := w.next("the batch's refusal", func(m rpc) bool { return m.Error != nil }); m.Error.Code != -32600 {
		t.Errorf("a batch over WebSocket: %+v", m)
	}
	if s.Stats().Connections != 2 {
		t.Errorf("%+v, want the two good connections", s.Stats())
	}
}

// TestWebSocketLimits: a message over MaxBody closes the socket (1009),
// whether it comes whole or announced in a frame header larger than
// anything the server will read; past MaxConnections the upgrade is 503.
func TestWebSocketLimits(t *testing.T) {
	s := newTestServer(t, Options{MaxBody: 4096, MaxConnections: 1})
	// A frame header announcing 1 GiB, then more than the limit: the
	// server reads no more than the limit (what it holds is what came,
	// never what was announced) and closes.
	raw := upgradeRaw(t, s.URL)
	hdr := []byte{0x81, 0xff, 0, 0, 0, 0, 0x40, 0, 0, 0, 1, 2, 3, 4} // FIN text, masked, 64-bit length 1 GiB, mask key
	raw.Write(append(hdr, bytes.Repeat([]byte("a"), 8192)...))
	if code := readClose(t, raw); code != int(websocket.StatusMessageTooBig) {
		t.Errorf("a 1 GiB frame: close %d, want 1009", code)
	}
	waitFor(t, "the connection to end", func() bool { return s.Stats() == Stats{} })

	w := dialWS(t, s.URL, nil)
	if code := status(t, attack{auth: []string{}}.do(t, s, "GET", "", "", true)); code != 503 {
		t.Errorf("a second socket past MaxConnections 1: %d, want 503", code)
	}
	w.ws.CloseNow()
	waitFor(t, "the connection to end", func() bool { return s.Stats() == Stats{} })
}

// upgradeRaw opens a WebSocket by hand: the test writes frames no client
// library would, or none at all.
func upgradeRaw(t *testing.T, url string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", Path)
	conn.SetReadDeadline(time.Now().Add(never))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	if br.Buffered() > 0 {
		t.Fatalf("frames came with the 101")
	}
	return conn
}

// writeFrame writes msg as one masked text frame (under 64 KiB).
func writeFrame(conn net.Conn, msg string) {
	mask := []byte{1, 2, 3, 4}
	frame := []byte{0x81, 0x80 | 126, byte(len(msg) >> 8), byte(len(msg))}
	frame = append(frame, mask...)
	for i := range len(msg) {
		frame = append(frame, msg[i]^mask[i%4])
	}
	conn.Write(frame)
}

// readClose reads frames until a close frame and returns its code (0 if
// the connection ended without one).
func readClose(t *testing.T, conn net.Conn) int {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(never))
	br := bufio.NewReader(conn)
	for {
		var h [2]byte
		if _, err := readFull(br, h[:]); err != nil {
			return 0
		}
		n := int(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			readFull(br, b[:])
			n = int(b[0])<<8 | int(b[1])
		case 127:
			var b [8]byte
			readFull(br, b[:])
			n = 0
			for _, x := range b {
				n = n<<8 | int(x)
			}
		}
		payload := make([]byte, n)
		if _, err := readFull(br, payload); err != nil {
			return 0
		}
		if h[0]&0x0f == 0x8 && n >= 2 {
			return int(payload[0])<<8 | int(payload[1])
		}
	}
}

func readFull(br *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := br.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// TestHalfOpenWebSocket: a socket whose peer vanished (it never reads
// nor answers a ping) is dropped by the ping, and its agent shut down.
func TestHalfOpenWebSocket(t *testing.T) {
	s := newTestServer(t, Options{KeepAlive: 20 * time.Millisecond, WriteTimeout: 100 * time.Millisecond})
	raw := upgradeRaw(t, s.URL)
	// Initialize, then silence: no read, no pong.
	// (The connection exists from the upgrade; it is not waited for, since
	// on a loaded machine the ping may drop it before a poll sees it.)
	writeFrame(raw, initBody)
	waitFor(t, "the half-open socket to be dropped", func() bool { return s.agents.shutdowns.Load() == 1 && s.Stats() == Stats{} })
	if n := s.agents.shutdowns.Load(); n != 1 {
		t.Errorf("%d agents shut down, want 1", n)
	}
}

// heapPeak samples the live heap (after a collection) at the points the
// fake agent's flood calls it, and keeps the largest.
type heapPeak struct {
	mu        sync.Mutex
	base, max uint64
}

func (h *heapPeak) sample() {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.base == 0 {
		h.base = m.HeapAlloc
	}
	h.max = max(h.max, m.HeapAlloc)
}

func (h *heapPeak) growth() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return int64(h.max) - int64(h.base)
}

// TestSlowReaderMemoryBounded: a client that opens its stream and never
// reads it, while its turn says 32 MB: the server's live heap grows by
// about MaxBuffered (queued) plus one write's worth, never by what the
// agent said. Measured, not only "it did not crash": the heap is sampled
// after a collection every 100 chunks of the flood.
func TestSlowReaderMemoryBounded(t *testing.T) {
	const maxBuffered = 256 << 10
	for _, transport := range []string{"sse", "websocket"} {
		t.Run(transport, func(t *testing.T) {
			// WriteTimeout "never": only the buffer bound can drop the client.
			s := newTestServer(t, Options{MaxBuffered: maxBuffered, WriteTimeout: never})
			var peak heapPeak
			s.agents.floodChunks, s.agents.sample = 3200, peak.sample // 3,200 chunks of 10 kB
			var raw net.Conn
			switch transport {
			case "sse":
				c := newClient(t, s.URL, "")
				c.initialize()
				sid := c.newSessionUnread(s.root)
				var err error
				if raw, err = net.Dial("tcp", strings.TrimPrefix(s.URL, "http://")); err != nil {
					t.Fatal(err)
				}
				defer raw.Close()
				raw.(*net.TCPConn).SetReadBuffer(4096)
				fmt.Fprintf(raw, "GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n%s: %s\r\n%s: %s\r\n\r\n",
					HeaderConnectionID, c.conn, HeaderSessionID, sid)
				waitFor(t, "the stream to attach", func() bool { c := s.conns1(); return c != nil && c.listening() == 2 })
				c.post(sid, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"flood"}]}}`)
			case "websocket":
				// A socket that never reads, the kernel's buffers small.
				raw = upgradeRaw(t, s.URL)
				raw.(*net.TCPConn).SetReadBuffer(4096)
				writeFrame(raw, initBody)
				writeFrame(raw, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":`+quote(s.root)+`,"mcpServers":[]}}`)
				waitFor(t, "the session", func() bool { return s.agents.sessions.Load() == 1 })
				writeFrame(raw, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"flood"}]}}`)
			}
			waitFor(t, "the flood to end", func() bool { return s.agents.floodDone.Load() == 1 })
			g := peak.growth()
			t.Logf("%s: live heap grew by at most %d kB while the agent said %d MB to a client that read nothing (MaxBuffered %d kB)",
				transport, g>>10, 3200*10000>>20, maxBuffered>>10)
			// Queued (MaxBuffered) + one taken batch being written
			// (MaxBuffered) + slack for the runtime; an unbounded queue
			// would hold the 32 MB.
			if limit := int64(4*maxBuffered + 4<<20); g > limit {
				t.Errorf("the heap grew by %d kB, over %d kB", g>>10, limit>>10)
			}
			waitFor(t, "the slow client to be dropped", func() bool { return s.Stats().Connections == 0 })
		})
	}
}

// listening is the count of attached streams.
func (c *conn) listening() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listeners
}

// TestCwdEscapes: beside TestCwdOutsideRoots, links that point outside
// the root and do not exist yet (the directory made later would be
// outside), and a loop of links.
func TestCwdEscapes(t *testing.T) {
	s := newTestServer(t, Options{})
	outside := t.TempDir()
	links := map[string]string{
		"dangling":     filepath.Join(outside, "not-yet"),
		"relative":     filepath.Join("..", filepath.Base(s.root)+"-never", "x"),
		"chain":        filepath.Join(s.root, "dangling"),
		"loop-a":       filepath.Join(s.root, "loop-b"),
		"loop-b":       filepath.Join(s.root, "loop-a"),
		"inside-later": filepath.Join(s.root, "made-later"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(s.root, name)); err != nil {
			t.Skip("no symlinks:", err)
		}
	}
	for _, tc := range []struct {
		cwd string
		ok  bool
	}{
		{filepath.Join(s.root, "dangling"), false},
		{filepath.Join(s.root, "dangling", "sub"), false},
		{filepath.Join(s.root, "relative"), false},
		{filepath.Join(s.root, "chain", "sub"), false},
		{filepath.Join(s.root, "loop-a"), false},
		{filepath.Join(s.root, "inside-later"), true},
		{filepath.Join(s.root, "sub", "..", "..", filepath.Base(outside)), false},
		{s.root + string(filepath.Separator) + ".." + string(filepath.Separator) + filepath.Base(s.root), true},
	} {
		if got := s.underRoots(tc.cwd); got != tc.ok {
			t.Errorf("%s: under the roots %v, want %v", tc.cwd, got, tc.ok)
		}
	}
}

// TestNothingSecretLogged: the log of a server that saw good and hostile
// requests holds neither the token nor any header's value.
func TestNothingSecretLogged(t *testing.T) {
	var log syncBuffer
	s := newTestServer(t, Options{Token: attackToken, Origins: []string{"https://app.example"},
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	secrets := []string{attackToken, "wrong-secret-value-9", "evil-host.example", "evil-origin.example", "header-value-xyz"}
	good := newClient(t, s.URL, attackToken)
	good.initialize()
	good.newSession(s.root)
	for _, a := range []attack{
		{auth: []string{"Bearer wrong-secret-value-9"}},
		{host: "evil-host.example"},
		{h: map[string]string{"Origin": "https://evil-origin.example", "X-Custom": "header-value-xyz"}},
		{auth: []string{}, query: "?token=" + attackToken},
	} {
		status(t, a.do(t, s, "POST", initBody, "", false))
		status(t, a.do(t, s, "GET", "", "", true))
	}
	w := dialWS(t, s.URL, http.Header{"Authorization": {"Bearer " + attackToken}, "User-Agent": {"header-value-xyz"}})
	w.ws.CloseNow()
	status(t, good.req("DELETE", "", nil))
	s.Close() // every connection's "closed" line is written
	waitFor(t, "the connections to close", func() bool { return s.Stats() == Stats{} })
	got := log.String()
	if !strings.Contains(got, "connection opened") || !strings.Contains(got, "connection closed") {
		t.Fatalf("the log lacks the connection lines:\n%s", got)
	}
	for _, secret := range secrets {
		if strings.Contains(got, secret) {
			t.Errorf("the log holds %q:\n%s", secret, got)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestLongIDsRefused: a session id names a mailbox the connection keeps
// until it ends, and a request id a pending entry while the request runs:
// ids as long as a body would let a client park gigabytes on one
// connection (256 mailboxes of 16 MiB names). Past maxIDBytes, a session id
// (header or params) or a request id is refused, and the heap does not
// keep what was sent.
func TestLongIDsRefused(t *testing.T) {
	s := newTestServer(t, Options{})
	c := newClient(t, s.URL, "")
	c.initialize()
	long := strings.Repeat("s", maxIDBytes+1)
	for _, tc := range []struct {
		name, body string
		hdr        map[string]string
	}{
		{"session header", `{"jsonrpc":"2.0","id":1,"method":"session/set_mode","params":{"modeId":"x"}}`, map[string]string{HeaderSessionID: long}},
		{"session in params", `{"jsonrpc":"2.0","id":1,"method":"session/set_mode","params":{"sessionId":"` + long + `","modeId":"x"}}`, nil},
		{"request id", `{"jsonrpc":"2.0","id":"` + long + `","method":"session/list","params":{}}`, nil},
	} {
		resp := c.req("POST", tc.body, tc.hdr)
		if body := readAll(resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "at most") {
			t.Errorf("%s of %d bytes: %d %q, want 400", tc.name, len(long), resp.StatusCode, body)
		}
	}
	// What was let through before: 48 requests naming sessions of 512 KiB,
	// each answered, each leaving a mailbox behind.
	var peak heapPeak
	peak.sample()
	huge := strings.Repeat("h", 512<<10)
	for i := range 48 {
		resp := c.req("POST", `{"jsonrpc":"2.0","id":`+strconv.Itoa(100+i)+`,"method":"session/set_mode","params":{"sessionId":"`+huge+strconv.Itoa(i)+`","modeId":"x"}}`, nil)
		readAll(resp)
	}
	peak.sample()
	t.Logf("48 requests naming 512 KiB sessions: the live heap grew by %d kB", peak.growth()>>10)
	if g := peak.growth(); g > 8<<20 {
		t.Errorf("the heap keeps %d MB after 48 requests naming 512 KiB sessions", g>>20)
	}
}

// TestGuardOverHTTP2: over cleartext HTTP/2 the Host is the :authority
// pseudo-header; the guard reads it, and the token, as over HTTP/1.1.
func TestGuardOverHTTP2(t *testing.T) {
	s := newTestServer(t, Options{Token: attackToken})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	defer tr.CloseIdleConnections()
	for _, tc := range []struct {
		token, host string
		want        int
	}{
		{attackToken, "evil.example:8741", 403},
		{"", "", 401},
		{"wrong", "", 401},
		{attackToken, "", 200},
	} {
		c := newClient(t, s.URL, tc.token)
		c.hc = &http.Client{Transport: tr}
		h := map[string]string{}
		if tc.host != "" {
			h["Host"] = tc.host
		}
		resp := c.req("POST", initBody, h)
		readAll(resp)
		if resp.ProtoMajor != 2 || resp.StatusCode != tc.want {
			t.Errorf("token %q Host %q: %s %d, want HTTP/2 %d", tc.token, tc.host, resp.Proto, resp.StatusCode, tc.want)
		}
	}
}

// TestInflightBytesBounded: an agent holds each request until it answers
// (a prompt for its whole turn), so what running requests hold is bounded
// across connections (MaxInflight, 503 past it) rather than only by their
// count (256 per connection, each up to MaxBody). Measured: 200 waiting
// prompts of 1 MiB held 206 MB before the bound.
func TestInflightBytesBounded(t *testing.T) {
	const limit = 8 << 20
	s := newTestServer(t, Options{MaxInflight: limit})
	a, b := newClient(t, s.URL, ""), newClient(t, s.URL, "")
	a.initialize()
	b.initialize()
	sa, sb := a.newSession(s.root), b.newSession(s.root)
	pad := strings.Repeat("p", 1<<20)
	prompt := func(c *client, sid string, id int) int {
		return status(t, c.req("POST", `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"session/prompt","params":{"sessionId":"`+sid+
			`","prompt":[{"type":"text","text":"wait"},{"type":"text","text":"`+pad+`"}]}}`, map[string]string{HeaderSessionID: sid}))
	}
	var peak heapPeak
	peak.sample()
	accepted := map[*client]int{}
	for i := range 16 {
		c, sid := a, sa
		if i%2 == 1 {
			c, sid = b, sb
		}
		switch code := prompt(c, sid, 100+i); code {
		case http.StatusAccepted:
			accepted[c]++
		case http.StatusServiceUnavailable:
		default:
			t.Fatalf("prompt %d: %d", i, code)
		}
	}
	// Each accepted prompt runs: its agent holds it, waiting.
	for c, n := range accepted {
		for range n {
			c.next("a permission request", method("session/request_permission"))
		}
	}
	peak.sample()
	t.Logf("%d of 16 prompts of 1 MiB accepted under MaxInflight %d MiB; live heap +%d MB; %d bytes counted in flight",
		accepted[a]+accepted[b], limit>>20, peak.growth()>>20, s.inflight.Load())
	if n := accepted[a] + accepted[b]; n != limit>>20-1 || s.inflight.Load() > limit {
		t.Errorf("%d prompts accepted (want %d), %d bytes in flight (bound %d)", n, limit>>20-1, s.inflight.Load(), limit)
	}
	// A second request under a running one's id is refused: its answer
	// could not be routed, and the first one's bytes would stay counted.
	if code := status(t, a.req("POST", `{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}`, nil)); code != http.StatusAccepted {
		t.Fatalf("session/list: %d", code)
	}
	if code := status(t, a.req("POST", `{"jsonrpc":"2.0","id":100,"method":"session/list","params":{}}`, nil)); code != http.StatusBadRequest {
		t.Errorf("a request under a running one's id: %d, want 400", code)
	}
	// Answered, or never answered because the connection ended: the bytes
	// are given back either way.
	status(t, a.req("DELETE", "", nil))
	close(s.agents.release)
	status(t, b.req("DELETE", "", nil))
	waitFor(t, "the connections to end", func() bool { return s.Stats() == Stats{} })
	if n := s.inflight.Load(); n != 0 {
		t.Errorf("%d bytes still counted in flight", n)
	}
}

// TestCloseDuringUpgrades: Close while WebSocket upgrades are on their way
// in. An upgrade that got its connection before Close, and starts its
// writer after Close began to wait, must not race that wait (the race
// detector saw it once under CI's load); every upgrade ends.
func TestCloseDuringUpgrades(t *testing.T) {
	s := newTestServer(t, Options{Token: attackToken})
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			r, err := http.NewRequest("GET", s.URL+Path, nil)
			if err != nil {
				return
			}
			r.Header.Set("Connection", "Upgrade")
			r.Header.Set("Upgrade", "websocket")
			r.Header.Set("Sec-WebSocket-Version", "13")
			r.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
			r.Header.Set("Authorization", "Bearer "+attackToken)
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			if resp, err := (&http.Client{Transport: tr}).Do(r); err == nil {
				resp.Body.Close()
			}
		})
	}
	// Close once the first are in, while the others are on their way.
	for deadline := time.Now().Add(30 * time.Second); s.Stats().Connections == 0 && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	s.Close()
	wg.Wait()
	if n := s.Stats().Connections; n != 0 {
		t.Errorf("%d connections left after Close", n)
	}
}
