package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/internal/staletmp"
)

// buildBridge compiles the command once per test binary run.
var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// never is how long a test waits for what must happen soon before it
// says it never does: a bound that tells "never" from "late on a busy
// machine", not a speed check (the figures are logged, not asserted).
const never = 30 * time.Second

func bridgeBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := staletmp.MkdirTemp("acp-bridge-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "acp-bridge")
		out, err := exec.Command("go", "build", "-o", buildPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// oaiMock is an OpenAI-compatible endpoint written against the wire format
// only (no client library types): it answers each request with the next
// step and keeps the request bodies.
type oaiMock struct {
	t     *testing.T
	mu    sync.Mutex
	steps []func(w http.ResponseWriter, body map[string]any)
	reqs  []map[string]any
}

func (m *oaiMock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-e2e" {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"bad key","type":"invalid_request_error"}}`)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		m.t.Errorf("request body: %v", err)
	}
	m.mu.Lock()
	n := len(m.reqs)
	m.reqs = append(m.reqs, body)
	m.mu.Unlock()
	if n >= len(m.steps) {
		m.t.Errorf("unexpected request %d", n+1)
		http.Error(w, "no more steps", http.StatusInternalServerError)
		return
	}
	m.steps[n](w, body)
}

// sseWrite streams data lines, cutting the byte stream every cut bytes so
// lines arrive in pieces.
func sseWrite(w http.ResponseWriter, cut int, payloads ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	s := b.String()
	for len(s) > 0 {
		k := min(cut, len(s))
		io.WriteString(w, s[:k])
		w.(http.Flusher).Flush()
		s = s[k:]
	}
}

func delta(d string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"x","object":"chat.completion.chunk","created":0,"model":"mock-1","choices":[{"index":0,"delta":` + d + `,"finish_reason":` + f + `}]}`
}

func usageOf(in, out int) string {
	return fmt.Sprintf(`{"id":"x","object":"chat.completion.chunk","created":0,"model":"mock-1","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, in, out, in+out)
}

// rpcClient is the editor end of the bridge's stdio.
type rpcClient struct {
	t      *testing.T
	in     io.WriteCloser
	out    *bufio.Scanner
	nextID int
	notes  []map[string]any // session/update params, in order
	// answer picks the optionId of a permission request (nil: allow-once);
	// perms keeps the requests' params.
	answer func(params map[string]any) string
	perms  []map[string]any
	// tap, when set, sees every line: toAgent for what the client sends.
	tap func(toAgent bool, line []byte)
}

func (c *rpcClient) send(v any) {
	b, _ := json.Marshal(v)
	if c.tap != nil {
		c.tap(true, b)
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and reads until its response, answering the bridge's
// own requests and collecting notifications on the way. Every line must be
// JSON-RPC: stdout is the protocol.
func (c *rpcClient) call(method string, params any) map[string]any {
	c.t.Helper()
	res, err := c.request(method, params)
	if err != nil {
		c.t.Fatalf("%s failed: %+v", method, *err)
	}
	return res
}

// request is call for a request that may fail: the error, if any, is
// returned instead of failing the test. On the way it keeps the updates,
// allows every permission request once and refuses other requests.
func (c *rpcClient) request(method string, params any) (map[string]any, *rpcError) {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	for c.out.Scan() {
		if c.tap != nil {
			c.tap(false, c.out.Bytes())
		}
		var msg struct {
			JSONRPC string         `json:"jsonrpc"`
			ID      any            `json:"id"`
			Method  string         `json:"method"`
			Params  map[string]any `json:"params"`
			Result  map[string]any `json:"result"`
			Error   *rpcError      `json:"error"`
		}
		if err := json.Unmarshal(c.out.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
			c.t.Fatalf("stdout line is not JSON-RPC: %q", c.out.Text())
		}
		switch {
		case msg.Method == "session/update":
			c.notes = append(c.notes, msg.Params)
		case msg.Method == "session/request_permission":
			c.perms = append(c.perms, msg.Params)
			opt := "allow-once"
			if c.answer != nil {
				opt = c.answer(msg.Params)
			}
			c.send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": opt}}})
		case msg.Method != "" && msg.ID != nil:
			c.send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "not offered"}})
		case msg.ID == float64(id):
			return msg.Result, msg.Error
		}
	}
	c.t.Fatalf("the bridge closed stdout while %s was pending: %v", method, c.out.Err())
	return nil, nil
}

func (c *rpcClient) updates(kind string) []map[string]any {
	var out []map[string]any
	for _, n := range c.notes {
		if u := n["update"].(map[string]any); u["sessionUpdate"] == kind {
			out = append(out, u)
		}
	}
	return out
}

// agentText is the text of every agent_message_chunk, joined.
func (c *rpcClient) agentText() string { return c.chunkText("agent_message_chunk") }

// thoughtText is the text of every agent_thought_chunk, joined.
func (c *rpcClient) thoughtText() string { return c.chunkText("agent_thought_chunk") }

// chunkText is the text of every update of that kind, joined.
func (c *rpcClient) chunkText(kind string) string {
	var b strings.Builder
	for _, u := range c.updates(kind) {
		b.WriteString(u["content"].(map[string]any)["text"].(string))
	}
	return b.String()
}

// startBinary starts the built bridge in a home of its own (HOME and the
// XDG dirs in a temp dir), stdin and stdout piped; at cleanup it closes
// stdin and expects the bridge to exit within 10 s.
func startBinary(t *testing.T, env []string, args ...string) (io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	stdin, sc, _ := startBinaryStderr(t, env, args...)
	return stdin, sc
}

// lockedBuffer is the bridge's stderr, read while it is written.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startBinaryStderr is startBinary that also returns the bridge's stderr
// so far, for a client that shows it (acp.el shows every chunk as an error).
func startBinaryStderr(t *testing.T, env []string, args ...string) (io.WriteCloser, *bufio.Scanner, func() string) {
	t.Helper()
	stdin, stdout, stderr := startBinaryPipes(t, env, args...)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	return stdin, sc, stderr
}

// startBinaryPipes is startBinaryStderr with the bridge's stdout as it is,
// for a client that reads it itself.
func startBinaryPipes(t *testing.T, env []string, args ...string) (io.WriteCloser, io.Reader, func() string) {
	t.Helper()
	cmd := exec.Command(bridgeBinary(t), args...)
	home := t.TempDir()
	cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_STATE_HOME=" + home},
		sandboxEnv()...), env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("the bridge did not exit when stdin closed; stderr:\n%s", stderr.String())
		}
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", stderr.String())
		}
	})
	return stdin, stdout, stderr.String
}

func startE2E(t *testing.T, env []string, args ...string) *rpcClient {
	t.Helper()
	stdin, sc := startBinary(t, env, args...)
	c := &rpcClient{t: t, in: stdin, out: sc}
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	return c
}

// TestBinaryMultiStepToolUse drives the built binary against the mock:
// reasoning and a tool call, a failed request retried, two tool calls
// (todo_write and read) in one response, then the answer.
func TestBinaryMultiStepToolUse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "hello.txt"), []byte("greetings from the workspace\n"), 0o644)
	os.WriteFile(filepath.Join(work, "plan.md"), []byte("step one\n"), 0o644)

	m := &oaiMock{t: t}
	m.steps = []func(http.ResponseWriter, map[string]any){
		func(w http.ResponseWriter, body map[string]any) {
			sseWrite(w, 9,
				delta(`{"role":"assistant","reasoning_content":"I need the file."}`, ""),
				delta(`{"content":"Reading it."}`, ""),
				delta(`{"tool_calls":[{"index":0,"id":"call_r1","type":"function","function":{"name":"read","arguments":""}}]}`, ""),
				delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"file_path\":"}}]}`, ""),
				delta(`{"tool_calls":[{"index":0,"function":{"arguments":"\"hello.txt\"}"}}]}`, ""),
				delta(`{}`, "tool_calls"),
				usageOf(500, 40))
		},
		func(w http.ResponseWriter, body map[string]any) {
			w.Header().Set("Retry-After", "0.01")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"busy, try again"}}`)
		},
		func(w http.ResponseWriter, body map[string]any) {
			sseWrite(w, 13,
				delta(`{"tool_calls":[{"index":0,"id":"call_t1","type":"function","function":{"name":"todo_write","arguments":"{\"todos\":[{\"content\":\"Read hello.txt\",\"status\":\"completed\"},"}}]}`, ""),
				delta(`{"tool_calls":[{"index":1,"id":"call_r2","type":"function","function":{"name":"read","arguments":"{\"file_path\":\"plan.md\"}"}}]}`, ""),
				delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"content\":\"Answer\",\"status\":\"in_progress\"}]}"}}]}`, ""),
				delta(`{}`, "tool_calls"),
				usageOf(700, 60))
		},
		func(w http.ResponseWriter, body map[string]any) {
			sseWrite(w, 5,
				delta(`{"content":"The file says: greetings "}`, ""),
				delta(`{"content":"from the workspace."}`, "stop"),
				usageOf(900, 12))
		},
	}
	srv := httptest.NewServer(m)
	defer srv.Close()

	c := startE2E(t, mockEnv, mockArgs(srv, "--context-window", "32000", "--retries", "2", "--log-level", "debug")...)
	sess := c.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
	sid := sess["sessionId"].(string)
	opts, _ := sess["configOptions"].([]any)
	if len(opts) != 4 || opts[1].(map[string]any)["currentValue"] != "endpoint/mock-1" || opts[2].(map[string]any)["id"] != "tools_mode" || opts[3].(map[string]any)["id"] != "sandbox" {
		t.Errorf("configOptions = %v", opts)
	}
	res := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "What does hello.txt say?"}}})
	if res["stopReason"] != "end_turn" {
		t.Fatalf("stopReason = %v", res["stopReason"])
	}

	if len(c.updates("available_commands_update")) != 1 {
		t.Errorf("no available_commands_update after session/new")
	}
	if th := c.updates("agent_thought_chunk"); len(th) == 0 || th[0]["content"].(map[string]any)["text"] != "I need the file." {
		t.Errorf("thoughts = %v", th)
	}
	text := c.agentText()
	for _, w := range []string{"Reading it.", "HTTP 503", "retrying", "The file says: greetings from the workspace."} {
		if !strings.Contains(text, w) {
			t.Errorf("agent text lacks %q:\n%s", w, text)
		}
	}
	completed := map[string]bool{}
	for _, u := range c.updates("tool_call_update") {
		if u["status"] == "completed" {
			completed[u["toolCallId"].(string)] = true
		}
	}
	for _, id := range []string{"call_r1", "call_r2"} {
		if !completed[id] {
			t.Errorf("tool call %s did not complete; completed: %v", id, completed)
		}
	}
	// todo_write's list is the plan, shown once: no card for its call.
	for _, kind := range []string{"tool_call", "tool_call_update"} {
		for _, u := range c.updates(kind) {
			if u["toolCallId"] == "call_t1" {
				t.Errorf("todo_write has a card: %v", u)
			}
		}
	}
	plans := c.updates("plan")
	if len(plans) != 1 || len(plans[0]["entries"].([]any)) != 2 {
		t.Errorf("plan updates = %v", plans)
	}
	usage := c.updates("usage_update")
	if len(usage) != 3 || usage[2]["used"] != float64(912) || usage[2]["size"] != float64(32000) {
		t.Errorf("usage updates = %v", usage)
	}
	if ti := c.updates("session_info_update"); len(ti) != 1 || ti[0]["title"] != "What does hello.txt say?" {
		t.Errorf("session_info_update = %v", ti)
	}

	// What the endpoint saw: 4 requests; the tool results and the earlier
	// reasoning went back.
	if len(m.reqs) != 4 {
		t.Fatalf("the endpoint saw %d requests, want 4", len(m.reqs))
	}
	msgs := m.reqs[3]["messages"].([]any)
	var sawReasoning, sawResult bool
	for _, raw := range msgs {
		msg := raw.(map[string]any)
		if msg["role"] == "assistant" && msg["reasoning_content"] == "I need the file." {
			sawReasoning = true
		}
		if msg["role"] == "tool" && msg["tool_call_id"] == "call_r1" && strings.Contains(fmt.Sprint(msg["content"]), "greetings from the workspace") {
			sawResult = true
		}
	}
	if !sawReasoning || !sawResult {
		t.Errorf("last request: reasoning passed back %v, tool result %v; messages %v", sawReasoning, sawResult, msgs)
	}
	if m.reqs[0]["stream"] != true || m.reqs[0]["model"] != "mock-1" || len(m.reqs[0]["tools"].([]any)) < 2 {
		t.Errorf("first request = %v", m.reqs[0])
	}

	// A slash command runs without a model request.
	res = c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "/mode plan"}}})
	if res["stopReason"] != "end_turn" || len(m.reqs) != 4 || len(c.updates("current_mode_update")) != 1 {
		t.Errorf("/mode plan: stop %v, requests %d, mode updates %d", res["stopReason"], len(m.reqs), len(c.updates("current_mode_update")))
	}
}

// TestBinaryAuthFailures: a missing or refused key fails session/prompt
// with -32000 (auth required), naming the variable, and no retries.
func TestBinaryAuthFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	m := &oaiMock{t: t}
	srv := httptest.NewServer(m)
	defer srv.Close()
	tests := []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		// A client without clientInfo gets neutral advice (TestBinaryKeyAdviceForTheEditor: per editor).
		{name: "DeepSeek default without a key", want: []string{"DEEPSEEK_API_KEY is not set", "Set DEEPSEEK_API_KEY", "your editor's settings"}},
		{name: "refused key", env: []string{"MY_KEY=wrong"}, args: []string{"--base-url", srv.URL + "/v1", "--model", "m", "--api-key-env", "MY_KEY"},
			want: []string{"refused the API key (HTTP 401)", "Set MY_KEY", "your editor's settings"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := startE2E(t, tc.env, tc.args...)
			sid := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})["sessionId"]
			_, rerr := c.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
			if rerr == nil || rerr.Code != -32000 {
				t.Fatalf("session/prompt error = %+v, want code -32000", rerr)
			}
			for _, w := range tc.want {
				if !strings.Contains(rerr.Message, w) {
					t.Errorf("message lacks %q: %s", w, rerr.Message)
				}
			}
			if strings.Contains(c.agentText(), "retrying") {
				t.Errorf("an auth failure was retried: %s", c.agentText())
			}
		})
	}
	if len(m.reqs) != 0 {
		t.Errorf("the refused request reached the handler body %d times", len(m.reqs))
	}
}
