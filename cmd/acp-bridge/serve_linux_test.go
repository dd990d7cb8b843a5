//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// serveEnv is the environment of a served bridge in these tests.
func serveEnv(t *testing.T, state string) []string {
	return []string{"ACP_BRIDGE_TOKEN=" + serveToken, "KEY_E2E=sk-e2e", "ACP_BRIDGE_STATE_DIR=" + state, "HOME=" + t.TempDir()}
}

const serveToken = "0123456789abcdef-linux-serve"

// asyncCall runs c.call in the background.
func asyncCall(c *wsSession, method string, params any) <-chan map[string]any {
	ch := make(chan map[string]any, 1)
	go func() {
		res, e := c.call(method, params)
		if e != nil {
			res = map[string]any{"error": e}
		}
		ch <- res
	}()
	return ch
}

// TestServeSIGTERMLetsTurnsEnd: on SIGTERM the server stops taking
// connections (health says closing, initialize gets 503) while a running
// turn goes on to its end and its answer reaches the client; then the
// process exits 0, and a new server loads the session with the turn.
func TestServeSIGTERMLetsTurnsEnd(t *testing.T) {
	asked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" || !strings.Contains(string(body), "take your time") {
			http.NotFound(w, r) // the model list and the like: not the turn
			return
		}
		once.Do(func() { close(asked) })
		<-release
		sseWrite(w, 1<<20, delta(`{"role":"assistant","content":"Finished after the signal."}`, "stop"))
	}))
	defer model.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	work, state := t.TempDir(), t.TempDir()
	args := []string{"--listen", "127.0.0.1:0", "--root", work, "--base-url", model.URL + "/v1", "--model", "mock-1", "--api-key-env", "KEY_E2E", "--log-level", "info"}
	p := startServe(t, serveEnv(t, state), args...)
	c := dialServe(t, p.url, serveToken)
	c.initialize()
	sid := c.newSession(work)
	answer := asyncCall(c, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "take your time"}}})
	<-asked
	p.cmd.Process.Signal(syscall.SIGTERM)
	health := strings.TrimSuffix(p.url, "/acp") + "/health"
	waitUntil(t, "health to say closing", func() bool {
		resp, err := http.Get(health)
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == 503 && strings.Contains(string(b), "closing")
	})
	req, _ := http.NewRequest("POST", p.url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+serveToken)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 503 {
		t.Errorf("initialize while closing: %v %v, want 503", err, resp)
	}
	close(release)
	select {
	case res := <-answer:
		if res["stopReason"] != "end_turn" {
			t.Errorf("the running turn ended with %v, want end_turn", res)
		}
	case <-time.After(never):
		t.Fatal("the running turn never answered")
	}
	if err := p.exit(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.stderr.String())
	}

	p2 := startServe(t, serveEnv(t, state), args...)
	c2 := dialServe(t, p2.url, serveToken)
	c2.initialize()
	if _, e := c2.call("session/load", map[string]any{"sessionId": sid, "cwd": work, "mcpServers": []any{}}); e != nil {
		t.Fatalf("load after the restart: %v", e)
	}
	if got := c2.agentText(); !strings.Contains(got, "Finished after the signal.") {
		t.Errorf("the loaded session lacks the turn that ended during shutdown: %q", got)
	}
}

// TestServeSIGKILLLeavesNothing: a served bridge killed while a command
// runs leaves no process behind (the watchdog, as for stdio), and a new
// server loads the session.
func TestServeSIGKILLLeavesNothing(t *testing.T) {
	cmdArgs, _ := json.Marshal(map[string]string{"command": "sleep 30 & sleep 30"})
	script := writeScript(t, t.TempDir(), "script.json",
		`{"parts":[{"text":"Running it."},{"tool_call":{"id":"b1","name":"bash","arguments":`+string(cmdArgs)+`}}]}`)
	work, state := t.TempDir(), t.TempDir()
	args := []string{"--listen", "127.0.0.1:0", "--root", work, "--model", "script:" + script, "--permission-mode", "bypass"}
	p := startServe(t, serveEnv(t, state), args...)
	c := dialServe(t, p.url, serveToken)
	c.initialize()
	sid := c.newSession(work)
	// Sent, not awaited: the answer never comes (the server is killed).
	prompt, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "session/prompt",
		"params": map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}}})
	if err := c.ws.Write(t.Context(), websocket.MessageText, prompt); err != nil {
		t.Fatal(err)
	}
	pid := p.cmd.Process.Pid
	before := awaitChildren(t, pid, 2, "sleep")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	if left := awaitGone(before, never); len(left) > 0 {
		t.Errorf("still running %v after serve was killed: %+v", never, left)
		for _, q := range left {
			syscall.Kill(q.pid, syscall.SIGKILL)
		}
	}
	p2 := startServe(t, serveEnv(t, state), args...)
	c2 := dialServe(t, p2.url, serveToken)
	c2.initialize()
	if _, e := c2.call("session/load", map[string]any{"sessionId": sid, "cwd": work, "mcpServers": []any{}}); e != nil {
		t.Fatalf("load after the kill: %v", e)
	}
}

// TestServeHandOverBetweenConnections: a session open (idle) on one
// connection is loaded on another: the first lets go of it
// (agent/handover.go), and is told so.
func TestServeHandOverBetweenConnections(t *testing.T) {
	script := writeScript(t, t.TempDir(), "script.json", `{"parts":[{"text":"First answer."}]}`)
	work := t.TempDir()
	p := startServe(t, serveEnv(t, t.TempDir()), "--listen", "127.0.0.1:0", "--root", work, "--model", "script:"+script)
	a := dialServe(t, p.url, serveToken)
	a.initialize()
	sid := a.newSession(work)
	a.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	b := dialServe(t, p.url, serveToken)
	b.initialize()
	if _, e := b.call("session/load", map[string]any{"sessionId": sid, "cwd": work, "mcpServers": []any{}}); e != nil {
		t.Fatalf("load on a second connection while the first holds it: %v", e)
	}
	if got := b.agentText(); !strings.Contains(got, "First answer.") {
		t.Errorf("the loaded session lacks its turn: %q", got)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(never)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, never)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeHalfOpenFlood: 5,000 TCP connections that send half a request
// and wait, against the binary: the served bridge's descriptors stay under
// its cap (1,024 connections), its memory stays bounded, and /health is
// answered during the flood (the silent connections give way).
func TestServeHalfOpenFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("5,000 connections to the binary")
	}
	const flood = 5000
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < flood+500 {
		t.Skipf("descriptor limit %d too low for %d connections", lim.Cur, flood)
	}
	script := writeScript(t, t.TempDir(), "script.json", `{"parts":[{"text":"hi"}]}`)
	p := startServe(t, serveEnv(t, t.TempDir()), "--listen", "127.0.0.1:0", "--model", "script:"+script)
	pid := p.cmd.Process.Pid
	fds := func() int {
		es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	health := strings.TrimSuffix(p.url, "/acp") + "/health"
	get := func() int {
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get(health)
		if err != nil {
			t.Fatalf("health: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	get()
	fdsBefore, rssBefore := fds(), rssKiB(pid)
	addr := strings.TrimSuffix(strings.TrimPrefix(p.url, "http://"), "/acp")
	conns := make([]net.Conn, 0, flood)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range flood {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", len(conns), err)
		}
		c.Write([]byte("POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le"))
		conns = append(conns, c)
	}
	// The accept queue is first in, first out: once this request is
	// answered, every connection before it has been accepted.
	if code := get(); code != 200 {
		t.Errorf("health during the flood: %d", code)
	}
	n, rss := fds(), rssKiB(pid)
	t.Logf("%d half-open connections: the server holds %d descriptors (%d before), RSS %d KiB (%d before)", flood, n, fdsBefore, rss, rssBefore)
	if n > fdsBefore+1024+16 {
		t.Errorf("the server holds %d descriptors, more than its cap of 1,024 connections allows", n)
	}
	if rss > rssBefore+128<<10 {
		t.Errorf("RSS grew by %d KiB", rss-rssBefore)
	}
}
