package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// runBinary runs the built bridge with stdin and env, and returns its
// stdout, stderr and exit code.
func runBinary(t *testing.T, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bridgeBinary(t), args...)
	home := t.TempDir()
	cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_STATE_HOME=" + home}, sandboxEnv()...), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the bridge did not exit; stderr:\n%s", errb.String())
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// TestBinaryPipedRequests: requests piped in and stdin closed right after
// are answered before the bridge exits.
func TestBinaryPipedRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + strconvQuote(dir) + `,"mcpServers":[]}}` + "\n"
	bridgeBinary(t) // built before the clock starts
	start := time.Now()
	out, errb, code := runBinary(t, in, nil, "--model", "script:"+helloScript(t), "--state-dir", "", "--log-level", "debug")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errb)
	}
	ids := map[float64]bool{}
	for l := range strings.Lines(out) {
		var msg map[string]any
		if err := json.Unmarshal([]byte(l), &msg); err != nil {
			t.Fatalf("stdout line is not JSON: %q", l)
		}
		if id, ok := msg["id"].(float64); ok && msg["result"] != nil {
			ids[id] = true
		}
	}
	if !ids[1] || !ids[2] {
		t.Errorf("answered %v, want ids 1 and 2; stdout:\n%s", ids, out)
	}
	for _, goValue := range []string{"<nil>", "&{", "map[", "0xc0"} {
		if strings.Contains(errb, goValue) {
			t.Errorf("the log prints a Go value (%q):\n%s", goValue, errb)
		}
	}
	if d := time.Since(start); d > drainTimeout {
		t.Errorf("took %v to answer and exit", d)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func helloScript(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(`{"responses":[{"parts":[{"text":"hi"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBinaryCommandLine: mistakes are printed once, briefly, on stderr,
// in the user's terms; --help goes to stdout.
func TestBinaryCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	cfgDir := t.TempDir()
	badCfg := filepath.Join(cfgDir, "config.yaml")
	os.WriteFile(badCfg, []byte("model: x\ntools_mode: code\n"), 0o644)
	tests := []struct {
		name     string
		env      []string
		args     []string
		code     int
		stdout   []string
		stderr   []string
		maxLines int // of stderr; 0: no stderr at all
	}{
		{name: "a bad flag", args: []string{"--nope"}, code: 2, stderr: []string{"flag provided but not defined: -nope", "Run 'acp-bridge --help'"}, maxLines: 2},
		{name: "--help to stdout", args: []string{"--help"}, code: 0, stdout: []string{"Usage:", "-base-url", "ACP_BRIDGE_CONFIG", "tools:"}},
		{name: "negative --retries", args: []string{"--retries", "-1"}, code: 2, stderr: []string{"--retries must be 0 or more, not -1"}, maxLines: 2},
		{name: "negative --context-window", args: []string{"--context-window", "-1"}, code: 2, stderr: []string{"--context-window must be 0 or more"}, maxLines: 2},
		{name: "OPENAI_BASE_URL is named", env: []string{"OPENAI_BASE_URL=localhost:11434/v1"}, code: 2, stderr: []string{"OPENAI_BASE_URL=", "is not an http(s) URL"}, maxLines: 1},
		{name: "OPENAI_BASE_URL without a model", env: []string{"OPENAI_BASE_URL=http://localhost:11434/v1"}, code: 2, stderr: []string{"OPENAI_BASE_URL is set to http://localhost:11434/v1", "ACP_BRIDGE_MODEL"}, maxLines: 1},
		{name: "a config key in the wrong place", env: []string{"ACP_BRIDGE_CONFIG=" + badCfg}, code: 2, stderr: []string{badCfg, `line 2: unknown key "tools_mode"`, "tools: {mode:"}, maxLines: 1},
		{name: "demo --model is refused", args: []string{"demo", "--model", "x"}, code: 2, stderr: []string{"the demo always runs its own scripted model"}, maxLines: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errb, code := runBinary(t, "", tc.env, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, errb)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tc.stderr {
				if !strings.Contains(errb, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errb)
				}
			}
			if n := strings.Count(errb, "\n"); n > tc.maxLines {
				t.Errorf("stderr has %d lines, want at most %d:\n%s", n, tc.maxLines, errb)
			}
			if strings.Contains(errb, "main.") || strings.Contains(errb, "!!") {
				t.Errorf("stderr names Go or YAML internals:\n%s", errb)
			}
			if tc.code != 0 && out != "" {
				t.Errorf("stdout is not empty: %q", out)
			}
		})
	}
}

// TestBinaryEndpointFailures: a real turn against endpoints that fail the
// ways real ones do ends with one sentence naming the URL, in bounded time,
// with no HTML in the thread and no retry where waiting cannot help.
func TestBinaryEndpointFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	refusedURL := closed.URL + "/v1"
	closed.Close()
	serve := func(status int, ctype, body string) (*httptest.Server, *atomic.Int32) {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			if strings.HasSuffix(r.URL.Path, "/models") {
				http.NotFound(w, r)
				return
			}
			n.Add(1)
			w.Header().Set("Content-Type", ctype)
			w.WriteHeader(status)
			io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv, &n
	}
	nginx, nginxN := serve(502, "text/html", "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")
	page, pageN := serve(200, "text/html; charset=utf-8", "<!doctype html><html><head><title>Open WebUI</title></head><body></body></html>")
	ollama, ollamaN := serve(404, "text/plain", "404 page not found")
	tests := []struct {
		name     string
		base     string
		want     []string
		requests *atomic.Int32
		maxReqs  int32
		within   time.Duration
	}{
		{name: "connection refused", base: refusedURL, want: []string{refusedURL + "/chat/completions", "connection refused", "Is the server running"}, within: 5 * time.Second},
		{name: "nginx 502", base: nginx.URL + "/v1", want: []string{"HTTP 502", `"502 Bad Gateway"`, "gave up after 2 attempts"}, requests: nginxN, maxReqs: 2, within: 10 * time.Second},
		{name: "a web page with 200", base: page.URL + "/v1", want: []string{"is not an OpenAI-compatible API endpoint", `"Open WebUI"`}, requests: pageN, maxReqs: 1, within: 5 * time.Second},
		{name: "Ollama without /v1", base: ollama.URL, want: []string{ollama.URL + "/chat/completions", "HTTP 404", "lacks /v1: try " + ollama.URL + "/v1"}, requests: ollamaN, maxReqs: 1, within: 5 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := startE2E(t, nil, "--base-url", tc.base, "--model", "m", "--retries", "1", "--state-dir", "")
			sid := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})["sessionId"]
			start := time.Now()
			_, rerr := c.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
			took := time.Since(start)
			// The failure is the prompt's JSON-RPC error; the thread holds the retries.
			if rerr == nil {
				t.Fatalf("the prompt did not fail; thread:\n%s", c.agentText())
			}
			text := rerr.Message + "\n" + c.agentText()
			if took > tc.within {
				t.Errorf("the turn took %v, want under %v", took, tc.within)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("the thread lacks %q:\n%s", w, text)
				}
			}
			if strings.Contains(text, "<") {
				t.Errorf("markup reached the thread:\n%s", text)
			}
			if tc.requests != nil && tc.requests.Load() > tc.maxReqs {
				t.Errorf("%d requests, want at most %d", tc.requests.Load(), tc.maxReqs)
			}
		})
	}
}

// TestBinaryModelPicker: with --base-url at a local server, the picker
// offers that server's models (its /models list) and no DeepSeek ones.
func TestBinaryModelPicker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"qwen3:8b","object":"model","created":1,"owned_by":"library"},{"id":"llama3.2:3b","object":"model","created":1,"owned_by":"library"}]}`)
	}))
	defer srv.Close()
	c := startE2E(t, nil, "--base-url", srv.URL+"/v1", "--model", "qwen3:8b", "--state-dir", "")
	var offered string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		b, _ := json.Marshal(c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})["configOptions"])
		offered = string(b)
		if strings.Contains(offered, "llama3.2:3b") {
			break
		}
	}
	for _, want := range []string{"endpoint/qwen3:8b", "endpoint/llama3.2:3b"} {
		if !strings.Contains(offered, want) {
			t.Errorf("the picker lacks %s: %s", want, offered)
		}
	}
	if strings.Contains(offered, "deepseek") {
		t.Errorf("the picker offers DeepSeek models for a local endpoint: %s", offered)
	}
	if strings.Count(offered, `"value":"endpoint/qwen3:8b"`) != 1 {
		t.Errorf("the configured model is offered twice: %s", offered)
	}
}
