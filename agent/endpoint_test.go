package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/acp-bridge/acp-bridge/model"
)

// endpoint is an OpenAI-compatible chat-completions server for the agent
// tests: it records every request body as sent and answers each from
// reply, over real HTTP and SSE through the real provider.
type endpoint struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	reply  func(n int, req *chatRequest) reply
}

// chatRequest is the part of a request body the tests look at; the raw
// pieces are kept to compare bytes.
type chatRequest struct {
	Messages []json.RawMessage `json:"messages"`
	Tools    json.RawMessage   `json:"tools"`
}

// message decodes message i.
func (r *chatRequest) message(i int) (m struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	ToolCalls []any  `json:"tool_calls"`
}) {
	_ = json.Unmarshal(r.Messages[i], &m)
	return m
}

// reply is one scripted answer: text, or tool calls, and the usage to report.
type reply struct {
	text     string
	calls    []model.ToolCall
	status   int    // non-zero: fail with this status and body
	body     string // the error body
	prompt   int    // usage.prompt_tokens; 0: measured from the body (4 bytes a token)
	complete int
	cached   int  // prompt_tokens_details.cached_tokens
	deepseek bool // report cached as prompt_cache_hit_tokens instead
}

func newEndpoint(t *testing.T, r func(n int, req *chatRequest) reply) *endpoint {
	e := &endpoint{t: t, reply: r}
	e.srv = newServer(t, e)
	return e
}

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// provider is the real OpenAI-compatible provider pointed at the endpoint.
func (e *endpoint) provider(window int) model.Provider {
	p, err := model.NewOpenAI(model.OpenAIOptions{BaseURL: e.srv.URL, Model: "test-model", APIKey: "k", ContextWindow: window})
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *endpoint) requests() []*chatRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*chatRequest, len(e.bodies))
	for i, b := range e.bodies {
		out[i] = &chatRequest{}
		if err := json.Unmarshal(b, out[i]); err != nil {
			e.t.Fatalf("request %d: %v", i, err)
		}
	}
	return out
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var req chatRequest
	if err := json.Unmarshal(b, &req); err != nil {
		e.t.Errorf("request body is not JSON: %v", err)
	}
	e.mu.Lock()
	n := len(e.bodies)
	e.bodies = append(e.bodies, b)
	e.mu.Unlock()
	rp := e.reply(n, &req)
	if rp.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rp.status)
		io.WriteString(w, rp.body)
		return
	}
	if rp.prompt == 0 {
		rp.prompt = len(b) / 4
	}
	w.Header().Set("Content-Type", "text/event-stream")
	var out bytes.Buffer
	chunk := func(delta any, finish string) {
		fr := any(nil)
		if finish != "" {
			fr = finish
		}
		c, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("r%d", n), "object": "chat.completion.chunk",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fr}}})
		fmt.Fprintf(&out, "data: %s\n\n", c)
	}
	if rp.text != "" {
		chunk(map[string]any{"role": "assistant", "content": rp.text}, "")
	}
	for i, c := range rp.calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(c.Arguments)}}}}, "")
	}
	finish := "stop"
	if len(rp.calls) > 0 {
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish)
	usage := map[string]any{"prompt_tokens": rp.prompt, "completion_tokens": rp.complete, "total_tokens": rp.prompt + rp.complete}
	if rp.cached > 0 {
		if rp.deepseek {
			usage["prompt_cache_hit_tokens"] = rp.cached
			usage["prompt_cache_miss_tokens"] = rp.prompt - rp.cached
		} else {
			usage["prompt_tokens_details"] = map[string]any{"cached_tokens": rp.cached}
		}
	}
	u, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("r%d", n), "object": "chat.completion.chunk", "choices": []any{}, "usage": usage})
	fmt.Fprintf(&out, "data: %s\n\ndata: [DONE]\n\n", u)
	w.Write(out.Bytes())
}

// sharedPrefix checks that request b starts with everything request a sent:
// the same tools, byte for byte, and a's messages as the first of b's.
func sharedPrefix(a, b *chatRequest) error {
	if !bytes.Equal(a.Tools, b.Tools) {
		return fmt.Errorf("the tools changed:\n%s\n%s", a.Tools, b.Tools)
	}
	if len(b.Messages) < len(a.Messages) {
		return fmt.Errorf("%d messages after %d", len(b.Messages), len(a.Messages))
	}
	for i, m := range a.Messages {
		if !bytes.Equal(m, b.Messages[i]) {
			return fmt.Errorf("message %d changed:\n%s\n%s", i, m, b.Messages[i])
		}
	}
	return nil
}
