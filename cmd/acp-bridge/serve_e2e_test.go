package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// serveProc is `acp-bridge serve` running as a child process.
type serveProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string // http://HOST:PORT/acp
	stderr *lockedBuffer
}

// startServe starts the binary's serve command and waits for the URL it
// prints.
func startServe(t *testing.T, env []string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(bridgeBinary(t), append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	pr, pw := io.Pipe()
	buf := &lockedBuffer{}
	cmd.Stderr = io.MultiWriter(pw, buf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{t: t, cmd: cmd, stderr: buf}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		pw.Close()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				found <- u
			}
		}
	}()
	select {
	case p.url = <-found:
	case <-time.After(never):
		t.Fatalf("serve printed no URL within %s:\n%s", never, buf.String())
	}
	return p
}

// exit waits for the process to end (within never) and returns how.
func (p *serveProc) exit(t *testing.T) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(never):
		t.Fatalf("serve did not exit within %s", never)
		return nil
	}
}

// wsSession is a WebSocket client of the served binary.
type wsSession struct {
	t      *testing.T
	ws     *websocket.Conn
	nextID int
	notes  []map[string]any // session/update params
	perms  int
	answer string // the optionId given to permission requests
}

func dialServe(t *testing.T, url, token string) *wsSession {
	t.Helper()
	ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(url, "http"), &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + token}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return &wsSession{t: t, ws: ws, answer: "allow-once"}
}

// initialize is the connection's initialize, which must succeed.
func (c *wsSession) initialize() {
	c.t.Helper()
	if _, e := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); e != nil {
		c.t.Fatalf("initialize: %v", e)
	}
}

// newSession opens a session in cwd, which must succeed.
func (c *wsSession) newSession(cwd string) any {
	c.t.Helper()
	res, e := c.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	if e != nil {
		c.t.Fatalf("session/new: %v", e)
	}
	return res["sessionId"]
}

// call sends a request and reads until its answer, answering permission
// requests and keeping updates on the way.
func (c *wsSession) call(method string, params any) (map[string]any, map[string]any) {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(c.t.Context(), never)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			c.t.Fatalf("%s: reading: %v", method, err)
		}
		var m struct {
			ID     *json.RawMessage `json:"id"`
			Method string           `json:"method"`
			Params map[string]any   `json:"params"`
			Result map[string]any   `json:"result"`
			Error  map[string]any   `json:"error"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			c.t.Fatal(err)
		}
		switch {
		case m.Method == "session/update":
			c.notes = append(c.notes, m.Params)
		case m.Method == "session/request_permission":
			c.perms++
			ans, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": c.answer}}})
			c.ws.Write(ctx, websocket.MessageText, ans)
		case m.Method != "" && m.ID != nil:
			ans, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "not here"}})
			c.ws.Write(ctx, websocket.MessageText, ans)
		case m.Method == "" && m.ID != nil && string(*m.ID) == fmt.Sprint(id):
			return m.Result, m.Error
		}
	}
}

// agentText is the agent's message chunks, joined.
func (c *wsSession) agentText() string {
	var b strings.Builder
	for _, u := range c.updates("agent_message_chunk") {
		content, _ := u["content"].(map[string]any)
		b.WriteString(fmt.Sprint(content["text"]))
	}
	return b.String()
}

func (c *wsSession) updates(kind string) []map[string]any {
	var out []map[string]any
	for _, n := range c.notes {
		if u, _ := n["update"].(map[string]any); u["sessionUpdate"] == kind {
			out = append(out, u)
		}
	}
	return out
}

// TestServeThroughTheBinary: `acp-bridge serve` on a free loopback port,
// with a token: hostile requests get their status; a WebSocket client runs
// a turn (a permission, a streamed command), leaves, and on a new
// connection loads the session back; SIGTERM ends the process cleanly.
func TestServeThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	mock := &oaiMock{t: t, steps: steps(
		answer("tool_calls", delta(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo served-output\"}"}}]}`, "")),
		answer("stop", delta(`{"role":"assistant","content":"All done."}`, "")),
	)}
	srv := httptest.NewServer(mock)
	defer srv.Close()
	work := t.TempDir()
	const token = "0123456789abcdef-serve-token"
	p := startServe(t, []string{"ACP_BRIDGE_TOKEN=" + token, "KEY_E2E=sk-e2e", "ACP_BRIDGE_STATE_DIR=" + t.TempDir(), "HOME=" + t.TempDir()},
		"--listen", "127.0.0.1:0", "--root", work, "--base-url", srv.URL+"/v1", "--model", "mock-1", "--api-key-env", "KEY_E2E", "--log-level", "info")
	if !strings.HasPrefix(p.url, "http://127.0.0.1:") || !strings.HasSuffix(p.url, "/acp") {
		t.Fatalf("printed URL %q", p.url)
	}

	// Hostile requests, each refused with its status.
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		body string
		want int
	}{
		{"no token", nil, init, 401},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, init, 401},
		{"foreign Origin", map[string]string{"Authorization": "Bearer " + token, "Origin": "https://evil.example"}, init, 403},
		{"rebinding Host", map[string]string{"Authorization": "Bearer " + token, "Host": "evil.example"}, init, 403},
		{"unknown connection", map[string]string{"Authorization": "Bearer " + token, "Acp-Connection-Id": "no-such"}, `{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}`, 404},
		{"oversized body", map[string]string{"Authorization": "Bearer " + token}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 16<<20) + `"}}`, 413},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", p.url, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range tc.hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}

	c := dialServe(t, p.url, token)
	res, e := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if e != nil {
		t.Fatalf("initialize: %v", e)
	}
	if caps, _ := res["agentCapabilities"].(map[string]any); caps != nil {
		if auth, _ := caps["auth"].(map[string]any); auth["logout"] != nil {
			t.Errorf("a remote client is offered logout (the server's stored key): %v", auth)
		}
		if b, _ := json.Marshal(caps); strings.Contains(string(b), "providers") {
			t.Errorf("a remote client is offered providers/* (the shared endpoints): %s", b)
		}
	}
	if methods, _ := res["authMethods"].([]any); len(methods) != 0 {
		for _, m := range methods {
			if mm, _ := m.(map[string]any); mm["type"] == "terminal" {
				t.Errorf("a remote client is offered the terminal login: %v", mm)
			}
		}
	}
	if _, e := c.call("session/new", map[string]any{"cwd": filepath.Dir(work), "mcpServers": []any{}}); e == nil || e["code"] != float64(-32602) {
		t.Errorf("a cwd outside --root: %v", e)
	}
	res, e = c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
	if e != nil {
		t.Fatalf("session/new: %v", e)
	}
	sid := res["sessionId"]
	res, e = c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "run it"}}})
	if e != nil || res["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v %v", res, e)
	}
	if c.perms != 1 {
		t.Errorf("%d permission requests, want 1", c.perms)
	}
	b, _ := json.Marshal(c.updates("tool_call_update"))
	if !strings.Contains(string(b), "served-output") {
		t.Errorf("the command's output never reached the client: %s", b)
	}
	c.ws.Close(websocket.StatusNormalClosure, "")

	// A new connection loads the session: the turn comes back.
	c2 := dialServe(t, p.url, token)
	c2.initialize()
	deadline := time.Now().Add(never)
	for {
		// The old connection's agent lets go of the session once it has
		// seen its socket close; until then the load is refused.
		_, e = c2.call("session/load", map[string]any{"sessionId": sid, "cwd": work, "mcpServers": []any{}})
		if e == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if e != nil {
		t.Fatalf("session/load on a new connection: %v", e)
	}
	if got := c2.agentText(); !strings.Contains(got, "All done.") {
		t.Errorf("the loaded session lacks the turn: %q", got)
	}
	res, e = c2.call("session/list", map[string]any{})
	if b, _ := json.Marshal(res); e != nil || !strings.Contains(string(b), fmt.Sprint(sid)) {
		t.Errorf("session/list: %s %v", b, e)
	}

	// SIGTERM: a clean exit, the log's last line says so.
	if runtime.GOOS == "windows" {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.exit(t); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, p.stderr.String())
	}
	log := p.stderr.String()
	if !strings.Contains(log, "msg=stopped") || strings.Contains(log, token) {
		t.Errorf("the log lacks its last line, or holds the token:\n%s", log)
	}
	if n := strings.Count(log, "msg=\"connection opened\""); n < 2 || n != strings.Count(log, "msg=\"connection closed\"") {
		t.Errorf("connections opened and closed do not pair up:\n%s", log)
	}
}

// TestServeDroppedClientTurnEnds: a client that goes while its turn waits
// for a permission answer: the request is answered "cancelled" for it (the
// command never runs), the turn ends and is saved, and a new connection
// loads the session with it.
func TestServeDroppedClientTurnEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	work := t.TempDir()
	marker := filepath.Join(work, "marker")
	args, _ := json.Marshal(map[string]string{"command": "touch " + marker})
	mock := &oaiMock{t: t, steps: steps(
		answer("tool_calls", delta(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":`+quoteJSON(string(args))+`}}]}`, "")),
		answer("stop", delta(`{"role":"assistant","content":"Carried on."}`, "")),
	)}
	srv := httptest.NewServer(mock)
	defer srv.Close()
	const token = "0123456789abcdef-dropped-client"
	p := startServe(t, []string{"ACP_BRIDGE_TOKEN=" + token, "KEY_E2E=sk-e2e", "ACP_BRIDGE_STATE_DIR=" + t.TempDir(), "HOME=" + t.TempDir()},
		"--listen", "127.0.0.1:0", "--root", work, "--base-url", srv.URL+"/v1", "--model", "mock-1", "--api-key-env", "KEY_E2E", "--log-level", "info")
	c := dialServe(t, p.url, token)
	c.initialize()
	sid := c.newSession(work)
	prompt, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 50, "method": "session/prompt",
		"params": map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "touch it"}}}})
	ctx, cancel := context.WithTimeout(t.Context(), never)
	defer cancel()
	c.ws.Write(ctx, websocket.MessageText, prompt)
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			t.Fatalf("no permission request: %v", err)
		}
		if strings.Contains(string(data), `"session/request_permission"`) {
			break
		}
	}
	c.ws.CloseNow() // the client goes, the question unanswered

	c2 := dialServe(t, p.url, token)
	c2.initialize()
	var e map[string]any
	for deadline := time.Now().Add(never); ; time.Sleep(20 * time.Millisecond) {
		// Refused while the old connection's turn still runs.
		if _, e = c2.call("session/load", map[string]any{"sessionId": sid, "cwd": work, "mcpServers": []any{}}); e == nil || time.Now().After(deadline) {
			break
		}
	}
	if e != nil {
		t.Fatalf("load after the client went: %v", e)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran though its permission was never given")
	}
	var failed bool
	for _, u := range c2.updates("tool_call_update") {
		failed = failed || u["status"] == "failed"
	}
	if !failed {
		t.Errorf("the loaded session does not show the refused call failed: %v", c2.updates("tool_call_update"))
	}
	waitLog := time.Now().Add(never)
	for !strings.Contains(p.stderr.String(), `reason="websocket closed"`) && time.Now().Before(waitLog) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(p.stderr.String(), `reason="websocket closed"`) {
		t.Errorf("no closing line for the dropped connection:\n%s", p.stderr.String())
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestServeTLS: with a certificate, serve speaks HTTPS (HTTP/2 when the
// client offers it), prints an https URL, and still wants the token.
func TestServeTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	cert, key := writeCert(t, []string{"localhost"}, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	const token = "0123456789abcdef-tls-token"
	script := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(script, []byte(`{"responses":[{"parts":[{"text":"hi"}]}]}`), 0o600)
	p := startServe(t, []string{"ACP_BRIDGE_TOKEN=" + token, "ACP_BRIDGE_STATE_DIR=" + t.TempDir(), "HOME=" + t.TempDir()},
		"--listen", "localhost:0", "--tls-cert", cert, "--tls-key", key, "--model", "script:"+script)
	if !strings.HasPrefix(p.url, "https://") {
		t.Fatalf("printed URL %q, want https", p.url)
	}
	pool := x509.NewCertPool()
	pem, _ := os.ReadFile(cert)
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(p.url, "https://"), "/acp"))
	url := "https://localhost:" + port + "/acp"
	post := func(auth string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if resp := post(""); resp.StatusCode != 401 {
		t.Errorf("no token over TLS: %d", resp.StatusCode)
	}
	resp := post(token)
	if resp.StatusCode != 200 || resp.Header.Get("Acp-Connection-Id") == "" {
		t.Fatalf("initialize over TLS: %d", resp.StatusCode)
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("negotiated %s, want HTTP/2", resp.Proto)
	}
}
