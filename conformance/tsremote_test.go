package conformance_test

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
)

// remoteModel is the OpenAI-compatible endpoint behind `acp-bridge serve`
// in the remote test. It answers by the conversation's last user message
// and the tool results after it: "run the command" asks for bash, "edit
// the notes" reads then edits notes.txt, "wait for cancel" says "Working"
// and then holds the response open until the bridge cancels it.
type remoteModel struct{}

func (remoteModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	last, tools := "", 0
	for _, m := range body.Messages {
		switch m.Role {
		case "user":
			last, tools = fmt.Sprint(m.Content), 0
		case "tool":
			tools++
		}
	}
	chunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"mock-1","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}` + "\n\n"
	}
	call := func(id, name, args string) string {
		b, _ := json.Marshal(args)
		return chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"`+id+`","type":"function","function":{"name":"`+name+`","arguments":`+string(b)+`}}]}`, "") + chunk(`{}`, "tool_calls")
	}
	text := func(s string) string { return chunk(`{"role":"assistant","content":"`+s+`"}`, "stop") }
	w.Header().Set("Content-Type", "text/event-stream")
	var out string
	switch {
	case strings.Contains(last, "run the command") && tools == 0:
		out = call("call_run", "bash", `{"command":"printf 'one\\ntwo\\n'"}`)
	case strings.Contains(last, "run the command"):
		out = text("Ran.")
	case strings.Contains(last, "edit the notes") && tools == 0:
		out = call("call_read", "read", `{"file_path":"notes.txt"}`)
	case strings.Contains(last, "edit the notes") && tools == 1:
		out = call("call_edit", "edit", `{"file_path":"notes.txt","old_string":"four","new_string":"FOUR"}`)
	case strings.Contains(last, "edit the notes"):
		out = text("Edited.")
	case strings.Contains(last, "wait for cancel"):
		io.WriteString(w, chunk(`{"role":"assistant","content":"Working"}`, ""))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		return
	default:
		out = text("OK.")
	}
	io.WriteString(w, out+"data: [DONE]\n\n")
}

// remoteSeen is what remote.mjs reports.
type remoteSeen struct {
	Updates     []map[string]any          `json:"updates"`
	Reloaded    []map[string]any          `json:"reloaded"`
	Responses   map[string]map[string]any `json:"responses"`
	Errors      map[string]string         `json:"errors"`
	Permissions int                       `json:"permissions"`
}

func agentTextOf(us []map[string]any) string {
	var b strings.Builder
	for _, u := range us {
		if u["sessionUpdate"] == "agent_message_chunk" {
			c, _ := u["content"].(map[string]any)
			b.WriteString(fmt.Sprint(c["text"]))
		}
	}
	return b.String()
}

// TestTypeScriptRemoteClients drives `acp-bridge serve` (the real binary,
// a token, a free loopback port) with the official TypeScript SDK's two
// remote clients, createHttpStream and createWebSocketStream: each runs a
// full session (a command behind a permission, its output streamed, an
// edit, a cancelled turn, a refused cwd, list, close), then reconnects on
// a new connection and loads the session back. Skipped without node and
// npm, or when the packages cannot be installed.
func TestTypeScriptRemoteClients(t *testing.T) {
	dir := installNodePackage(t, "tsremote")
	bin, err := buildBridge()
	if err != nil {
		t.Fatal(err)
	}
	model := httptest.NewServer(remoteModel{})
	defer model.Close()
	root := t.TempDir()
	const token = "tsremote-0123456789abcdef"
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--root", root,
		"--base-url", model.URL+"/v1", "--model", "mock-1", "--api-key-env", "MOCK_KEY", "--log-level", "info")
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "ACP_BRIDGE_TOKEN="+token, "MOCK_KEY=sk-ts", "ACP_BRIDGE_STATE_DIR="+t.TempDir(),
		"HOME="+home, "XDG_CONFIG_HOME="+home)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var log strings.Builder
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				urlc <- u
			}
		}
	}()
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var url string
	select {
	case url = <-urlc:
	case <-time.After(30 * time.Second):
		t.Fatal("serve printed no URL within 30 s")
	}

	for _, transport := range []string{"http", "ws"} {
		t.Run(transport, func(t *testing.T) {
			work := filepath.Join(root, transport)
			os.Mkdir(work, 0o755)
			notes := filepath.Join(work, "notes.txt")
			os.WriteFile(notes, []byte("one\ntwo\nthree\nfour\n"), 0o644)
			sc, _ := json.Marshal(map[string]any{"url": url, "token": token, "transport": transport, "cwd": work})
			out := filepath.Join(dir, transport+".json")
			node := exec.CommandContext(t.Context(), "node", "remote.mjs")
			node.Dir = dir
			node.Env = append(os.Environ(), "SCENARIO="+string(sc), "OUT="+out)
			if b, err := node.CombinedOutput(); err != nil {
				t.Fatalf("node: %v\n%s", err, b)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var seen remoteSeen
			if err := json.Unmarshal(b, &seen); err != nil {
				t.Fatal(err)
			}
			for k, v := range seen.Errors {
				if k != "outside" {
					t.Errorf("%s failed: %s", k, v)
				}
			}
			if !strings.Contains(seen.Errors["outside"], "outside") {
				t.Errorf("a cwd outside --root was not refused: %q", seen.Errors["outside"])
			}
			if seen.Permissions < 2 {
				t.Errorf("%d permission requests, want the command's and the edit's", seen.Permissions)
			}
			if b, _ := json.Marshal(seen.Updates); !strings.Contains(string(b), `one\ntwo`) {
				t.Errorf("the command's output was not streamed: %s", b)
			}
			if got, _ := os.ReadFile(notes); string(got) != "one\ntwo\nthree\nFOUR\n" {
				t.Errorf("notes.txt = %q, want the edit applied", got)
			}
			if r := seen.Responses["cancelled"]; r["stopReason"] != "cancelled" {
				t.Errorf("the cancelled turn ended with %v", r)
			}
			sid := fmt.Sprint(seen.Responses["new"]["sessionId"])
			if b, _ := json.Marshal(seen.Responses["list"]); !strings.Contains(string(b), sid) {
				t.Errorf("session/list lacks %s: %s", sid, b)
			}
			if _, ok := seen.Responses["close"]; !ok {
				t.Error("session/close did not answer")
			}
			caps, _ := seen.Responses["reinitialize"]["agentCapabilities"].(map[string]any)
			if caps["loadSession"] != true {
				t.Errorf("the second connection's initialize: %v", seen.Responses["reinitialize"])
			}
			if got := agentTextOf(seen.Reloaded); !strings.Contains(got, "Ran.") || !strings.Contains(got, "Edited.") {
				t.Errorf("the session loaded on a new connection lacks its turns: %q", got)
			}
		})
	}
	logMu.Lock()
	l := log.String()
	logMu.Unlock()
	if strings.Contains(l, token) {
		t.Errorf("the log holds the token:\n%s", l)
	}
	if n := strings.Count(l, `msg="connection opened"`); n < 4 {
		t.Errorf("%d connections logged, want 4:\n%s", n, l)
	}
}
