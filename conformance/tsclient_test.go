package conformance_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/acp-bridge/acp-bridge/conformance"
)

// tsModel is an OpenAI-compatible endpoint for the TypeScript-client test.
// A conversation's first request fails once with 503 (the bridge retries:
// a notice, or agent text), then asks for bash; after the tool result it
// answers; a prompt containing "again" gets its own answer. Every request
// body is kept.
type tsModel struct {
	mu    sync.Mutex
	first map[string]bool // user texts whose first request already failed
	reqs  []map[string]any
}

func (m *tsModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	msgs, _ := body["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	role, _ := last["role"].(string)
	content := fmt.Sprint(last["content"])
	m.mu.Lock()
	m.reqs = append(m.reqs, body)
	retry := role == "user" && !m.first[content] && !strings.Contains(content, "again")
	m.first[content] = true
	m.mu.Unlock()
	chunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"mock-1","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}` + "\n\n"
	}
	usage := `data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"mock-1","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":8,"total_tokens":128}}` + "\n\n"
	var out string
	switch {
	case retry:
		w.Header().Set("Retry-After", "0.01")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"message":"busy, try again"}}`)
		return
	case role == "tool":
		out = chunk(`{"role":"assistant","content":"Listed."}`, "stop")
	case strings.Contains(content, "again"):
		out = chunk(`{"role":"assistant","content":"Forked answer."}`, "stop")
	default:
		out = chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_ls","type":"function","function":{"name":"bash","arguments":"{\"command\":\"printf 'one\\\\ntwo\\\\n'\"}"}}]}`, "") +
			chunk(`{}`, "tool_calls")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, out+usage+"data: [DONE]\n\n")
}

// tsSeen is what client.mjs reports.
type tsSeen struct {
	tsReport
	Sessions map[string][]map[string]any `json:"sessions"`
}

func (s *tsSeen) updates(kind string) []map[string]any {
	var out []map[string]any
	for _, us := range s.Sessions {
		for _, u := range us {
			if u["sessionUpdate"] == kind {
				out = append(out, u)
			}
		}
	}
	return out
}

func (s *tsSeen) agentText() string {
	var b strings.Builder
	for _, u := range s.updates("agent_message_chunk") {
		c, _ := u["content"].(map[string]any)
		b.WriteString(fmt.Sprint(c["text"]))
	}
	return b.String()
}

// TestTypeScriptClient drives the real binary with the official ACP
// TypeScript SDK (from npm), once opting in to notices and terminal output
// deltas and once not: tool names on the cards, notices and deltas only
// when asked, a fork that continues the conversation, an append system
// prompt in the model request, the turn's usage, and every message valid
// against the 1.25 schemas the SDK ships. Skipped without node and npm, or
// when the SDK cannot be installed.
func TestTypeScriptClient(t *testing.T) {
	c := newTSClient(t)
	conformance.SkipUnlessConfined(t, c.bin)
	if !c.schema.HasUpdate("notice") || c.schema.Unstable == nil {
		t.Fatalf("the SDK's schema is not 1.25 with its unstable set (notice %v)", c.schema.HasUpdate("notice"))
	}
	model := &tsModel{first: map[string]bool{}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	work := t.TempDir()

	run := func(name string, scenario map[string]any) *tsSeen {
		t.Helper()
		scenario["cwd"] = work
		var seen tsSeen
		c.run(tsRun{Script: "client.mjs", Name: name, Scenario: scenario, Strict: true,
			Args: []string{"--base-url", srv.URL + "/v1", "--model", "mock-1", "--api-key-env", "MOCK_KEY", "--retries", "2"},
			Env:  []string{"MOCK_KEY=sk-ts"}}, &seen)
		return &seen
	}

	const sysPrompt = "Always answer in French."
	in := run("opt-in", map[string]any{
		"clientCapabilities": map[string]any{"session": map[string]any{"notices": map[string]any{}},
			"_meta": map[string]any{"terminal_output_delta": true}},
		"prompt": "run the listing (opt-in)", "systemPrompt": sysPrompt, "forkPrompt": "and again?",
	})
	out := run("opt-out", map[string]any{"clientCapabilities": map[string]any{}, "prompt": "run the listing (opt-out)"})

	for name, seen := range map[string]*tsSeen{"opt-in": in, "opt-out": out} {
		calls := seen.updates("tool_call")
		if len(calls) == 0 {
			t.Errorf("%s: no tool_call", name)
		}
		for _, u := range append(calls, seen.updates("tool_call_update")...) {
			if u["name"] != "bash" {
				t.Errorf("%s: %s without the tool's name bash: %v", name, u["sessionUpdate"], u)
			}
		}
		if r := seen.Responses["prompt"]; r["stopReason"] != "end_turn" {
			t.Errorf("%s: prompt answered %v", name, r)
		} else if meta, _ := r["_meta"].(map[string]any); r["usage"] != nil {
			t.Errorf("%s: usage at the root of the PromptResponse, a field of the unstable schema only: %v", name, r)
		} else if u, _ := meta["usage"].(map[string]any); u["inputTokens"] != float64(240) || u["outputTokens"] != float64(16) {
			t.Errorf("%s: PromptResponse._meta.usage = %v, want the turn's two requests, 240 in, 16 out", name, meta["usage"])
		}
	}

	// Notices only when asked; the same news as agent text otherwise.
	if n := in.updates("notice"); len(n) == 0 || !strings.Contains(strings.ToLower(fmt.Sprint(n[0]["title"])), "retr") {
		t.Errorf("opt-in: notices %v, want the retry as a notice", n)
	}
	if strings.Contains(in.agentText(), "retrying") {
		t.Errorf("opt-in: the retry went out as agent text too: %q", in.agentText())
	}
	if n := out.updates("notice"); len(n) > 0 {
		t.Errorf("opt-out: notices sent to a client that did not ask: %v", n)
	}
	if !strings.Contains(out.agentText(), "retrying") {
		t.Errorf("opt-out: the retry is not in the agent text: %q", out.agentText())
	}

	// Terminal output deltas only when asked.
	deltas := func(s *tsSeen) string {
		var b strings.Builder
		for _, u := range s.updates("tool_call_update") {
			meta, _ := u["_meta"].(map[string]any)
			if d, ok := meta["terminal_output_delta"].(map[string]any); ok {
				b.WriteString(fmt.Sprint(d["data"]))
			}
		}
		return b.String()
	}
	if got := deltas(in); got != "one\ntwo\n" {
		t.Errorf("opt-in: terminal_output_delta data %q, want the command's output", got)
	}
	if got := deltas(out); got != "" {
		t.Errorf("opt-out: terminal_output_delta sent unasked: %q", got)
	}

	// The system prompt went to the model (opt-in only), and the fork's
	// request carried the original conversation.
	model.mu.Lock()
	reqs := model.reqs
	model.mu.Unlock()
	var forkReq map[string]any
	for _, r := range reqs {
		msgs, _ := r["messages"].([]any)
		sys := fmt.Sprint(msgs[0].(map[string]any)["content"])
		all, _ := json.Marshal(msgs)
		opted := strings.Contains(string(all), "(opt-in)")
		if opted != strings.Contains(sys, sysPrompt) {
			t.Errorf("system prompt of a request (opt-in %v) has the client's prompt %v:\n%s", opted, !opted, sys)
		}
		if strings.Contains(string(all), "and again?") {
			forkReq = r
		}
	}
	if in.Responses["fork"]["sessionId"] == nil {
		t.Fatalf("no fork: %v", in.Responses["fork"])
	}
	if in.Responses["forkPrompt"]["stopReason"] != "end_turn" || forkReq == nil {
		t.Fatalf("the fork's prompt: %v, model request %v", in.Responses["forkPrompt"], forkReq != nil)
	}
	all, _ := json.Marshal(forkReq["messages"])
	for _, want := range []string{"run the listing (opt-in)", "call_ls", "one\\ntwo", "Listed.", "and again?"} {
		if !strings.Contains(string(all), want) {
			t.Errorf("the fork's model request lacks %q: %s", want, all)
		}
	}
	if got := in.Sessions[fmt.Sprint(in.Responses["fork"]["sessionId"])]; !strings.Contains(fmt.Sprint(got), "Forked answer.") {
		t.Errorf("the fork's updates: %v", got)
	}
}
