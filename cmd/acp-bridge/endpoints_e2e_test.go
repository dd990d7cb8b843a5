package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// recordedEndpoint answers chat-completions requests with recorded
// responses of model/testdata/endpoints, in order, the last one again once
// they run out.
func recordedEndpoint(t *testing.T, files ...string) *httptest.Server {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		name := files[min(n, len(files)-1)]
		n++
		mu.Unlock()
		raw, err := os.ReadFile(filepath.Join("..", "..", "model", "testdata", "endpoints", name))
		if err != nil {
			t.Error(err)
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), r)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		for k, vs := range resp.Header {
			if k != "Content-Length" {
				w.Header()[k] = vs
			}
		}
		w.WriteHeader(resp.StatusCode)
		for _, part := range bytes.SplitAfter(body, []byte("\n\n")) {
			w.Write(part)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestBinaryRecordedEndpoints drives the built bridge through whole turns
// against recorded streams of real endpoints: every call the endpoint made
// is one card with its own id that completes, reasoning shows as thoughts,
// and the answer follows.
func TestBinaryRecordedEndpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	tests := []struct {
		name    string
		files   []string
		cards   int
		thought string
	}{
		{"DeepSeek reasoner", []string{"deepseek-reasoner.http", "full-answer.http"}, 1, "The user wants go.mod read."},
		{"OpenAI parallel calls", []string{"openai-parallel-tools.http", "full-answer.http"}, 2, ""},
		{"Ollama whole calls", []string{"ollama-v1-tools.http", "full-answer.http"}, 2, ""},
		{"Ollama reasoning", []string{"ollama-v1-reasoning.http"}, 0, "Okay, the user says hi."},
		{"vLLM hermes", []string{"vllm-hermes-tools.http", "full-answer.http"}, 1, "I need the module file."},
		{"llama.cpp", []string{"llamacpp-tools.http", "full-answer.http"}, 1, ""},
		{"Mistral", []string{"mistral-tools.http", "full-answer.http"}, 2, ""},
		{"Mistral Magistral", []string{"mistral-magistral-thinking.http"}, 0, "Two plus two is four."},
		{"xAI", []string{"xai-grok-mini.http", "full-answer.http"}, 1, "Need the file."},
		{"Groq", []string{"groq-reasoning.http", "full-answer.http"}, 1, "Okay, let me look."},
		{"OpenRouter", []string{"openrouter-reasoning.http"}, 0, "Simple greeting."},
		{"OpenRouter error mid-stream, retried", []string{"openrouter-midstream-error.http", "full-answer.http"}, 0, ""},
		{"Gemini two calls in one delta", []string{"gemini-parallel-tools.http", "full-answer.http"}, 2, ""},
		{"the same call id in every response", []string{"duplicate-ids.http", "duplicate-ids.http", "full-answer.http"}, 4, ""},
		// The rejected call goes back as its failed result (a retry notice
		// says so); the next answer's call runs.
		{"Groq tool_use_failed error, recovered", []string{"groq-tool-use-failed.http", "groq-after-tool-use-failed.http", "full-answer.http"}, 1,
			"Need to read go.mod.The argument is file_path."},
		{"vLLM without a tool parser: Hermes markup in the text", []string{"vllm-leaked-hermes.http", "full-answer.http"}, 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cwd := t.TempDir()
			for _, f := range []string{"go.mod", "README.md", "a.txt", "b.txt", "main.go"} {
				os.WriteFile(filepath.Join(cwd, f), []byte("package main // "+f+" TODO\n"), 0o644)
			}
			srv := recordedEndpoint(t, tc.files...)
			c := startE2E(t, nil, "--base-url", srv.URL+"/v1", "--model", "m", "--state-dir", "")
			sid := c.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})["sessionId"]
			res := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
			if res["stopReason"] != "end_turn" {
				t.Errorf("stopReason %v; thread:\n%s", res["stopReason"], c.agentText())
			}
			ids := map[string]bool{}
			for _, u := range c.updates("tool_call") {
				id, _ := u["toolCallId"].(string)
				if ids[id] {
					t.Errorf("card id %s used twice", id)
				}
				ids[id] = true
			}
			if len(ids) != tc.cards {
				t.Errorf("%d cards, want %d", len(ids), tc.cards)
			}
			done := map[string]string{}
			for _, u := range c.updates("tool_call_update") {
				if st, ok := u["status"].(string); ok && (st == "completed" || st == "failed") {
					done[u["toolCallId"].(string)] = st
				}
			}
			for id := range ids {
				if done[id] != "completed" {
					t.Errorf("card %s ended %q, want completed", id, done[id])
				}
			}
			if thought := c.thoughtText(); thought != tc.thought {
				t.Errorf("thoughts %q, want %q", thought, tc.thought)
			}
			text := c.agentText()
			if strings.Contains(text, "failed") && !strings.Contains(tc.name, "error") {
				t.Errorf("the thread reports a failure:\n%s", text)
			}
			if n := strings.Count(text, "partial answer."); tc.cards > 0 && n != 1 {
				t.Errorf("the final answer appears %d times:\n%s", n, text)
			}
		})
	}
}

// TestBinaryTokenLimitThenInBandError: an endpoint ends an answer at the
// token limit and then reports "Token limit reached" as an error: MiniMax
// through OpenRouter in a chunk with choices, OpenRouter itself as a bare
// error object on the last data line. The turn ends with max_tokens, not an
// error, keeping what streamed, and the endpoint's last word reaches the
// thread: a notice for a client that takes them, agent text for the others.
func TestBinaryTokenLimitThenInBandError(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	tests := []struct {
		name, file, thought, text string
	}{
		{"MiniMax via OpenRouter", "openrouter-minimax-length.http", "The user wants the whole module tree explained. Start with go.mod, then", ""},
		{"OpenRouter bare error object", "openrouter-length-error.http", "", "The module has three packages: agent, model and"},
	}
	for _, tc := range tests {
		for _, notices := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/notices=%v", tc.name, notices), func(t *testing.T) {
				srv := recordedEndpoint(t, tc.file)
				stdin, sc := startBinary(t, nil, "--base-url", srv.URL+"/v1", "--model", "m", "--state-dir", "")
				c := &rpcClient{t: t, in: stdin, out: sc}
				caps := map[string]any{}
				if notices {
					caps["session"] = map[string]any{"notices": map[string]any{}}
				}
				c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps})
				sid := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})["sessionId"]
				res, err := c.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "explain"}}})
				if err != nil || res["stopReason"] != "max_tokens" {
					t.Fatalf("prompt = %v, %+v; want stopReason max_tokens", res, err)
				}
				if thought := c.thoughtText(); thought != tc.thought {
					t.Errorf("thoughts %q, want %q", thought, tc.thought)
				}
				text := withoutOffNote(c.agentText())
				if !strings.HasPrefix(text, tc.text) {
					t.Errorf("the thread %q does not start with the answer %q", text, tc.text)
				}
				said := text[len(tc.text):]
				if notices {
					var b strings.Builder
					for _, u := range c.updates("notice") {
						fmt.Fprintf(&b, "%v %v\n", u["title"], u["description"])
					}
					said = b.String()
				}
				if !strings.Contains(said, "Token limit reached") {
					t.Errorf("the endpoint's message is not in the thread: %q (agent text %q)", said, text)
				}
			})
		}
	}
}
