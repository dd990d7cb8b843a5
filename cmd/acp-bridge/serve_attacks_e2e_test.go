package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeAttacksThroughTheBinary: remote's attack tables
// (remote/attacks_test.go) against `acp-bridge serve` itself, logging at
// debug: every way in (POST, the SSE GET, DELETE, the WebSocket upgrade)
// refuses a missing, wrong or recased token, a token in the query, a
// rebinding Host and a null or foreign Origin; a batch is 501 with a
// JSON-RPC error; a cwd that leaves --root by "..", a link or a link to
// what does not exist yet is refused; and the log holds no token and no
// header value.
func TestServeAttacksThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := httptest.NewServer(&oaiMock{t: t})
	defer srv.Close()
	work, outside := t.TempDir(), t.TempDir()
	for name, target := range map[string]string{"escape": outside, "dangling": filepath.Join(outside, "not-yet")} {
		if err := os.Symlink(target, filepath.Join(work, name)); err != nil {
			t.Skip("no symlinks:", err)
		}
	}
	const token = "0123456789abcdef-Attack-Token"
	p := startServe(t, []string{"ACP_BRIDGE_TOKEN=" + token, "KEY_E2E=sk-e2e", "ACP_BRIDGE_STATE_DIR=" + t.TempDir(), "HOME=" + t.TempDir()},
		"--listen", "127.0.0.1:0", "--root", work, "--base-url", srv.URL+"/v1", "--model", "mock-1", "--api-key-env", "KEY_E2E", "--log-level", "debug")
	secrets := []string{token, strings.ToLower(token), "wrong-token-value-77", "evil-host.example", "evil-origin.example", "header-value-xyz"}

	do := func(method, body string, hdr map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, p.url+hdr["?"], strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range hdr {
			switch k {
			case "?":
			case "Host":
				req.Host = v
			default:
				req.Header.Set(k, v)
			}
		}
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	ways := map[string]struct {
		method, body string
		hdr          map[string]string
	}{
		"POST":      {"POST", init, nil},
		"GET":       {"GET", "", map[string]string{"Accept": "text/event-stream", "Acp-Connection-Id": "0d1e2f3a-0000-4000-8000-000000000000"}},
		"DELETE":    {"DELETE", "", map[string]string{"Acp-Connection-Id": "0d1e2f3a-0000-4000-8000-000000000000"}},
		"WebSocket": {"GET", "", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}},
	}
	bearer := "Bearer " + token
	for _, a := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no token", map[string]string{"X-Custom": "header-value-xyz"}, 401},
		{"wrong token", map[string]string{"Authorization": "Bearer wrong-token-value-77"}, 401},
		{"recased token", map[string]string{"Authorization": "Bearer " + strings.ToLower(token)}, 401},
		{"token in the query", map[string]string{"?": "?token=" + token + "&access_token=" + token}, 401},
		{"rebinding Host", map[string]string{"Authorization": bearer, "Host": "evil-host.example:8741"}, 403},
		{"null Origin", map[string]string{"Authorization": bearer, "Origin": "null"}, 403},
		{"foreign Origin", map[string]string{"Authorization": bearer, "Origin": "https://evil-origin.example"}, 403},
	} {
		for name, way := range ways {
			hdr := map[string]string{}
			for k, v := range way.hdr {
				hdr[k] = v
			}
			for k, v := range a.hdr {
				hdr[k] = v
			}
			resp := do(way.method, way.body, hdr)
			resp.Body.Close()
			if resp.StatusCode != a.want {
				t.Errorf("%s on %s: %d, want %d", a.name, name, resp.StatusCode, a.want)
			}
		}
	}
	// A cross-site simple request: text/plain, the browser's Origin.
	resp := do("POST", init, map[string]string{"Authorization": bearer, "Content-Type": "text/plain", "Origin": "https://evil-origin.example"})
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("a cross-site text/plain POST: %d, want 403", resp.StatusCode)
	}
	resp = do("POST", "["+init+"]", map[string]string{"Authorization": bearer})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var m struct {
		Error struct{ Code int }
	}
	if resp.StatusCode != 501 || json.Unmarshal(b, &m) != nil || m.Error.Code != -32600 {
		t.Errorf("a batch: %d %s, want 501 with a JSON-RPC error", resp.StatusCode, b)
	}

	c := dialServe(t, p.url, token)
	c.initialize()
	// Each refused by the screen (remote/screen.go), before the agent
	// (which would also refuse a cwd that does not exist) sees it.
	for _, params := range []map[string]any{
		{"cwd": filepath.Join(work, "..", filepath.Base(outside))},
		{"cwd": filepath.Join(work, "escape")},
		{"cwd": filepath.Join(work, "escape", "sub")},
		{"cwd": filepath.Join(work, "dangling")},
		{"cwd": filepath.Join(work, "dangling", "sub")},
		{"cwd": work, "additionalDirectories": []string{filepath.Join(work, "dangling")}},
	} {
		params["mcpServers"] = []any{}
		if _, e := c.call("session/new", params); e == nil || e["code"] != float64(-32602) || !strings.Contains(fmt.Sprint(e["message"]), "outside the directories") {
			t.Errorf("%v outside --root: %v, want -32602 saying so", params, e)
		}
	}
	c.newSession(work)
	c.ws.CloseNow()
	p.cmd.Process.Kill()
	p.exit(t)
	log := p.stderr.String()
	if !strings.Contains(log, "connection opened") {
		t.Fatalf("the log has no connection line:\n%s", log)
	}
	for _, s := range secrets {
		if strings.Contains(log, s) {
			t.Errorf("the log holds %q", s)
		}
	}
}
