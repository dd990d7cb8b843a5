package model

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// replayServer answers each request with the next recorded response of
// testdata/endpoints (the last one again once they run out). The files are
// whole HTTP responses, headers and body, in the shapes these servers send;
// event streams are written event by event.
type replayServer struct {
	t     *testing.T
	mu    sync.Mutex
	files []string
	n     int
	last  []byte // the body of the last request
}

func (s *replayServer) lastBody() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func (s *replayServer) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *replayServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	name := s.files[min(s.n, len(s.files)-1)]
	s.n++
	s.last = b
	s.mu.Unlock()
	raw, err := os.ReadFile(filepath.Join("testdata", "endpoints", name))
	if err != nil {
		s.t.Error(err)
		return
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), r)
	if err != nil {
		s.t.Errorf("%s: %v", name, err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	for k, vs := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(resp.StatusCode)
	fl := w.(http.Flusher)
	for _, part := range bytes.SplitAfter(body, []byte("\n\n")) {
		w.Write(part)
		fl.Flush()
	}
}

// TestRecordedEndpoints replays what real OpenAI-compatible servers send
// and checks what the bridge makes of it: thoughts, text, separate calls
// with the endpoint's ids, usage, and for failures one error naming the URL
// and the fix, retried only when waiting can help, with no markup in it.
func TestRecordedEndpoints(t *testing.T) {
	type call struct{ id, name, args string }
	tests := []struct {
		name      string
		files     []string
		thought   string
		text      string
		calls     []call
		finish    Finish
		usage     *Usage
		kind      ErrorKind // of the final error; "" = success
		inError   []string
		requests  int
		discards  int
		reasoning string   // the field the endpoint's reasoning goes back in
		tools     bool     // the request offers tools (read, get_current_weather)
		sent      []string // in the last request's body
		notices   []string // what the endpoint said after the answer ended (EventNotice)
	}{{
		name:  "DeepSeek reasoner: keep-alive, reasoning_content, a call in pieces, cached tokens",
		files: []string{"deepseek-reasoner.http"}, thought: "The user wants go.mod read.", text: "Reading it.",
		calls:  []call{{"call_00_Xq3u2mN7pL1vK8sB4dR6tY", "read", `{"file_path":"go.mod"}`}},
		finish: FinishToolCalls, usage: &Usage{InputTokens: 1320, OutputTokens: 41, CachedTokens: 1280}, requests: 1,
		reasoning: "reasoning_content",
	}, {
		name:   "OpenAI: two parallel calls by index, usage after the finish",
		files:  []string{"openai-parallel-tools.http"},
		calls:  []call{{"call_Jd8kQ2vN5mX1pZ7rT4yB9cW3", "read", `{"file_path": "go.mod"}`}, {"call_Pq3rS7tU1vW5xY9zA2bC6dE0", "grep", `{"pattern": "TODO"}`}},
		finish: FinishToolCalls, usage: &Usage{InputTokens: 812, OutputTokens: 48, CachedTokens: 768}, requests: 1,
	}, {
		name: "Ollama /v1: reasoning in delta.reasoning", files: []string{"ollama-v1-reasoning.http"},
		thought: "Okay, the user says hi.", text: "Hello!", finish: FinishStop, usage: &Usage{InputTokens: 11, OutputTokens: 19}, requests: 1,
		reasoning: "reasoning",
	}, {
		name: "Ollama /v1: whole calls, one a chunk", files: []string{"ollama-v1-tools.http"},
		calls:  []call{{"call_l1ed3w4e", "read", `{"file_path":"go.mod"}`}, {"call_9x2kq0ab", "glob", `{"pattern":"**/*.go"}`}},
		finish: FinishToolCalls, requests: 1,
	}, {
		name: "Ollama without /v1: a plain-text 404 names the URL and the fix", files: []string{"ollama-no-v1.http"},
		kind: ErrNotAPI, inError: []string{"/chat/completions", "HTTP 404", "404 page not found", "lacks /v1", "/v1"}, requests: 1,
	}, {
		name: "Ollama: a model not pulled", files: []string{"ollama-model-missing.http"},
		kind: ErrInvalidRequest, inError: []string{"HTTP 404", `model "qwen3:8b" not found`, `Check the model name ("test-model")`}, requests: 1,
	}, {
		name: "vLLM (hermes parser): reasoning_content, a call named first, arguments after", files: []string{"vllm-hermes-tools.http"},
		thought: "I need the module file.", calls: []call{{"chatcmpl-tool-5b2f8e9c1d7a4036", "read", `{"file_path": "go.mod"}`}},
		finish: FinishToolCalls, usage: &Usage{InputTokens: 402, OutputTokens: 45}, requests: 1,
	}, {
		name: "vLLM: an error object mid-stream is a server error, retried", files: []string{"vllm-stream-error.http", "full-answer.http"},
		text: "partial answer.", finish: FinishStop, requests: 2, discards: 1,
	}, {
		name: "llama.cpp: reasoning_content, usage on the finish chunk", files: []string{"llamacpp-reasoning.http"},
		thought: "Short answer.", text: "Hi there.", finish: FinishStop, usage: &Usage{InputTokens: 22, OutputTokens: 9}, requests: 1,
	}, {
		name: "llama.cpp: a call in pieces", files: []string{"llamacpp-tools.http"},
		calls: []call{{"q8Yh3kLm2Np5Rs7Tv9Wx1Za4Bc6De0Fg", "read", `{"file_path":"go.mod"}`}}, finish: FinishToolCalls,
		usage: &Usage{InputTokens: 301, OutputTokens: 18}, requests: 1,
	}, {
		name: "Mistral: two whole calls in the finishing chunk", files: []string{"mistral-tools.http"},
		calls:  []call{{"D681PevKs", "read", `{"file_path": "go.mod"}`}, {"h3kT9wQ2e", "read", `{"file_path": "README.md"}`}},
		finish: FinishToolCalls, usage: &Usage{InputTokens: 912, OutputTokens: 48}, requests: 1,
	}, {
		name: "Mistral Magistral: thinking parts inside content", files: []string{"mistral-magistral-thinking.http"},
		thought: "Two plus two is four.", text: "4", finish: FinishStop, usage: &Usage{InputTokens: 10, OutputTokens: 20}, requests: 1,
	}, {
		name: "xAI grok-3-mini: reasoning_content, no finish_reason key until the end", files: []string{"xai-grok-mini.http"},
		thought: "Need the file.", calls: []call{{"call_61728493", "read", `{"file_path":"go.mod"}`}}, finish: FinishToolCalls,
		usage: &Usage{InputTokens: 640, OutputTokens: 31, CachedTokens: 512}, requests: 1,
	}, {
		name: "Groq: reasoning in delta.reasoning, usage in x_groq", files: []string{"groq-reasoning.http"},
		thought: "Okay, let me look.", calls: []call{{"call_ab12cd34", "read", `{"file_path":"go.mod"}`}}, finish: FinishToolCalls,
		usage: &Usage{InputTokens: 350, OutputTokens: 40}, requests: 1, reasoning: "reasoning",
	}, {
		name: "OpenRouter: comments, reasoning, usage after the finish", files: []string{"openrouter-reasoning.http"},
		thought: "Simple greeting.", text: "Hello!", finish: FinishStop, usage: &Usage{InputTokens: 9, OutputTokens: 14}, requests: 1,
		reasoning: "reasoning",
	}, {
		name: "OpenRouter: an error after id and choices, finish_reason error, is retried", files: []string{"openrouter-midstream-error.http", "full-answer.http"},
		text: "partial answer.", finish: FinishStop, requests: 2, discards: 1,
	}, {
		name:  "MiniMax via OpenRouter: finish_reason length, then the limit as an in-band error: cut at the limit, thoughts kept",
		files: []string{"openrouter-minimax-length.http"}, thought: "The user wants the whole module tree explained. Start with go.mod, then",
		finish: FinishLength, usage: &Usage{InputTokens: 1830, OutputTokens: 64}, requests: 1, reasoning: "reasoning",
		notices: []string{"Token limit reached"},
	}, {
		name:  "OpenRouter: finish_reason length, then a bare error object as the last data line: cut at the limit, the endpoint's word kept",
		files: []string{"openrouter-length-error.http"}, text: "The module has three packages: agent, model and",
		finish: FinishLength, requests: 1, notices: []string{"Token limit reached"},
	}, {
		name:  "Groq: a call rejected in an event: error (tool_use_failed) goes back as its failed result; the next answer's call stands",
		files: []string{"groq-tool-use-failed.http", "groq-after-tool-use-failed.http"}, tools: true,
		thought: "The argument is file_path.", calls: []call{{"fc_5d8e1a3b", "read", `{"file_path":"go.mod"}`}},
		finish: FinishToolCalls, usage: &Usage{InputTokens: 420, OutputTokens: 30}, requests: 2, discards: 1,
		sent: []string{`"id":"rejected_call_1"`, `"name":"read","arguments":"{\"path\": \"go.mod\"}"`, `"tool_call_id":"rejected_call_1"`,
			"rejected before it ran: Failed to call a function", `What you wrote: \u003cfunction=read\u003e`},
	}, {
		name: "Groq: a call rejected every time: asked again twice, then the error", files: []string{"groq-tool-use-failed.http"}, tools: true,
		kind: ErrCallRejected, inError: []string{"rejected the tool call the model wrote", "Failed to call a function"}, requests: 3,
		sent: []string{"rejected_call_1", "rejected_call_2"},
	}, {
		name: "llama.cpp without a tool parser: Qwen3-Coder XML in the text is the call it was meant to be", files: []string{"llamacpp-leaked-qwen-xml.http"}, tools: true,
		calls:  []call{{"chatcmpl-L1_text_1", "get_current_weather", `{"days":3,"location":"San Francisco"}`}},
		finish: FinishToolCalls, usage: &Usage{InputTokens: 280, OutputTokens: 31}, requests: 1,
	}, {
		name: "llama.cpp: the same markup without tools offered stays text", files: []string{"llamacpp-leaked-qwen-xml.http"},
		text:   "<tool_call>\n<function=get_current_weather>\n<parameter=location>\nSan Francisco\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
		finish: FinishStop, usage: &Usage{InputTokens: 280, OutputTokens: 31}, requests: 1,
	}, {
		name: "vLLM without a tool parser: Hermes JSON in the text after an answer is a call; the answer stays", files: []string{"vllm-leaked-hermes.http"}, tools: true,
		text: "I'll check.\n", calls: []call{{"chatcmpl-4a7_text_1", "read", `{"file_path": "go.mod"}`}},
		finish: FinishToolCalls, usage: &Usage{InputTokens: 350, OutputTokens: 32}, requests: 1,
	}, {
		name: "OpenRouter: the error every time is reported, not ended as end_turn", files: []string{"openrouter-midstream-error.http"},
		kind: ErrServer, inError: []string{"gave up after 3 attempts", "Provider returned error", "Chutes"}, requests: 3,
	}, {
		name: "Gemini: two whole calls in one delta, no index, empty ids", files: []string{"gemini-parallel-tools.http"},
		text:   "I'll read both.",
		calls:  []call{{"call_LpMvaYq3Ko2Wz7IPk9Gs0Qc_1", "read", `{"file_path":"go.mod"}`}, {"call_LpMvaYq3Ko2Wz7IPk9Gs0Qc_2", "read", `{"file_path":"README.md"}`}},
		finish: FinishToolCalls, usage: &Usage{InputTokens: 700, OutputTokens: 40}, requests: 1,
	}, {
		name: "Gemini: an error in an array", files: []string{"gemini-400.http"},
		kind: ErrInvalidRequest, inError: []string{"HTTP 400", "Request contains an invalid argument"}, requests: 1,
	}, {
		name: "a duplicated call id: two calls, the endpoint's ids kept", files: []string{"duplicate-ids.http"},
		calls:  []call{{"call_0", "read", `{"file_path":"a.txt"}`}, {"call_0", "read", `{"file_path":"b.txt"}`}},
		finish: FinishToolCalls, requests: 1,
	}, {
		name: "nginx 502: retried, the page never quoted", files: []string{"nginx-502.http", "full-answer.http"},
		text: "partial answer.", finish: FinishStop, requests: 2,
	}, {
		name: "nginx 502 every time: the error is the page's title", files: []string{"nginx-502.http"},
		kind: ErrServer, inError: []string{"HTTP 502", `"502 Bad Gateway"`, "gave up after 3 attempts"}, requests: 3,
	}, {
		name: "a web page served with 200: not an API, not retried", files: []string{"html-200.http"},
		kind: ErrNotAPI, inError: []string{"is not an OpenAI-compatible API endpoint", `"Open WebUI"`, "lacks /v1"}, requests: 1,
	}, {
		name: "DeepSeek out of credit: not retried", files: []string{"deepseek-402.http"},
		kind: ErrQuota, inError: []string{"out of credit", "HTTP 402", "Insufficient Balance"}, requests: 1,
	}, {
		name: "OpenAI 429 with Retry-After, then an answer", files: []string{"openai-429.http", "full-answer.http"},
		text: "partial answer.", finish: FinishStop, requests: 2,
	}, {
		name: "a cut stream retried: the repeated part is not yielded again", files: []string{"cut-partial.http", "cut-partial.http", "full-answer.http"},
		text: "partial answer.", finish: FinishStop, requests: 3,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := &replayServer{t: t, files: tc.files}
			srv := httptest.NewServer(rs)
			defer srv.Close()
			p := provider(t, srv.URL, func(o *OpenAIOptions) { o.ContextWindow = 0 })
			sl := &recordSleep{}
			var got result
			var chunks []string
			req := &Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}
			if tc.tools {
				req.Tools = []ToolSpec{{Name: "read", Parameters: json.RawMessage(`{"type":"object"}`)},
					{Name: "get_current_weather", Parameters: json.RawMessage(`{"type":"object"}`)}}
			}
			for ev, err := range Retry(p, RetryOptions{Retries: 2, Sleep: sl.sleep}).Stream(t.Context(), req) {
				if err != nil {
					got.err = err
					break
				}
				switch ev.Kind {
				case EventText:
					got.text += ev.Text
					chunks = append(chunks, ev.Text)
				case EventThought:
					got.thought += ev.Text
				case EventToolCall:
					got.calls = append(got.calls, *ev.ToolCall)
				case EventUsage:
					got.usage = ev.Usage
				case EventFinish:
					got.finish = ev.Finish
				case EventDiscard:
					got.discards++
					got.text, got.thought, chunks = "", "", nil
				case EventNotice:
					got.notices = append(got.notices, ev.Text)
				}
			}
			if rs.requests() != tc.requests {
				t.Errorf("%d requests, want %d", rs.requests(), tc.requests)
			}
			if got.discards != tc.discards {
				t.Errorf("%d discards, want %d", got.discards, tc.discards)
			}
			for _, s := range tc.sent {
				if !strings.Contains(string(rs.lastBody()), s) {
					t.Errorf("the last request lacks %s:\n%s", s, rs.lastBody())
				}
			}
			if tc.kind != "" {
				var me *Error
				if !errors.As(got.err, &me) || me.Kind != tc.kind {
					t.Fatalf("err = %v, want kind %s", got.err, tc.kind)
				}
				msg := got.err.Error()
				for _, s := range append(tc.inError, srv.URL+"/chat/completions") {
					if !strings.Contains(msg, s) {
						t.Errorf("error %q lacks %q", msg, s)
					}
				}
				if strings.ContainsAny(msg, "<>") {
					t.Errorf("error %q quotes markup", msg)
				}
				return
			}
			if got.err != nil {
				t.Fatalf("err = %v", got.err)
			}
			if !slices.Equal(got.notices, tc.notices) {
				t.Errorf("notices %q, want %q", got.notices, tc.notices)
			}
			if got.thought != tc.thought || got.text != tc.text || got.finish != tc.finish {
				t.Errorf("thought %q text %q finish %q; want %q %q %q", got.thought, got.text, got.finish, tc.thought, tc.text, tc.finish)
			}
			if strings.Count(strings.Join(chunks, ""), "partial") > 1 {
				t.Errorf("text chunks repeat the partial answer: %q", chunks)
			}
			if len(got.calls) != len(tc.calls) {
				t.Fatalf("calls = %+v, want %+v", got.calls, tc.calls)
			}
			for i, c := range tc.calls {
				g := got.calls[i]
				if g.ID != c.id || g.Name != c.name || string(g.Arguments) != c.args {
					t.Errorf("call %d = %s %s %s, want %s %s %s", i, g.ID, g.Name, g.Arguments, c.id, c.name, c.args)
				}
			}
			if tc.usage != nil && (got.usage == nil || got.usage.Estimated || got.usage.InputTokens != tc.usage.InputTokens ||
				got.usage.OutputTokens != tc.usage.OutputTokens || got.usage.CachedTokens != tc.usage.CachedTokens) {
				t.Errorf("usage = %+v, want %+v", got.usage, tc.usage)
			}
			if tc.reasoning != "" {
				// The next request sends the reasoning back in the field it came in.
				for range p.Stream(t.Context(), &Request{Messages: []Message{{Role: RoleAssistant, Content: "x", Reasoning: "r"}}}) {
				}
				var sent struct {
					Messages []map[string]any `json:"messages"`
				}
				if err := json.Unmarshal(rs.lastBody(), &sent); err != nil || len(sent.Messages) != 1 {
					t.Fatalf("request body %s: %v", rs.lastBody(), err)
				}
				body := sent.Messages[0]
				if (tc.reasoning == "reasoning") != (body["reasoning"] == "r") || (tc.reasoning == "reasoning_content") != (body["reasoning_content"] == "r") {
					t.Errorf("reasoning sent back as %+v, want the %s field", body, tc.reasoning)
				}
			}
		})
	}
}

// TestRetryBudget: the retries stop when the next one would start past the
// budget, however many attempts are left.
func TestRetryBudget(t *testing.T) {
	_, srv := newMock(t, sse{status: 503, body: `{"error":{"message":"busy"}}`})
	now := time.Unix(0, 0)
	var waited []time.Duration
	o := RetryOptions{Retries: 100, BaseDelay: 10 * time.Second, MaxDelay: 10 * time.Second, Budget: 35 * time.Second,
		Now: func() time.Time { return now },
		Sleep: func(_ context.Context, d time.Duration) error {
			waited = append(waited, d)
			now = now.Add(d)
			return nil
		}}
	got := collectStream(t, Retry(provider(t, srv.URL, nil), o), nil)
	if got.err == nil || !strings.Contains(got.err.Error(), "gave up after") || len(waited) > 4 || len(waited) < 2 {
		t.Fatalf("err = %v after %d waits (%v), want a give-up within the 35s budget", got.err, len(waited), waited)
	}
	var total time.Duration
	for _, d := range waited {
		total += d
	}
	if total > 35*time.Second {
		t.Errorf("waited %v in all, past the budget", total)
	}
}
