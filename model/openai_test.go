package model

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// sse is one scripted response of the mock endpoint.
type sse struct {
	status int               // non-200: an error response with body
	header map[string]string // extra response headers
	body   string            // error body
	events []string          // JSON payloads of data: lines; "[DONE]" is added unless noDone
	noDone bool
	split  int  // write the stream in pieces of this many bytes (0: per event)
	stall  bool // after the events, hold the connection open without a byte
	hangup bool // after the events, cut the connection
}

// mock is an OpenAI-compatible endpoint that plays one sse per request and
// records each request body.
type mock struct {
	t      *testing.T
	mu     sync.Mutex
	plays  []sse
	bodies []map[string]any
	auth   []string
}

func newMock(t *testing.T, plays ...sse) (*mock, *httptest.Server) {
	m := &mock{t: t, plays: plays}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv
}

func (m *mock) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.bodies)
}

func (m *mock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		m.t.Errorf("request body is not JSON: %v", err)
	}
	m.mu.Lock()
	n := len(m.bodies)
	m.bodies = append(m.bodies, body)
	m.auth = append(m.auth, r.Header.Get("Authorization"))
	var p sse
	if n < len(m.plays) {
		p = m.plays[n]
	} else {
		p = m.plays[len(m.plays)-1]
	}
	m.mu.Unlock()

	for k, v := range p.header {
		w.Header().Set(k, v)
	}
	if p.status != 0 && p.status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(p.status)
		io.WriteString(w, p.body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	var stream strings.Builder
	for _, e := range p.events {
		stream.WriteString("data: " + e + "\n\n")
	}
	if !p.noDone && !p.stall && !p.hangup {
		stream.WriteString("data: [DONE]\n\n")
	}
	s := stream.String()
	if p.split <= 0 {
		io.WriteString(w, s)
		fl.Flush()
	} else {
		for len(s) > 0 {
			k := min(p.split, len(s))
			io.WriteString(w, s[:k])
			fl.Flush()
			s = s[k:]
			time.Sleep(time.Millisecond) // separate reads, so lines really arrive in pieces
		}
	}
	switch {
	case p.stall:
		<-r.Context().Done()
	case p.hangup:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
}

func chunk(delta string, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	return `{"id":"resp1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fr + `}]}`
}

func usageChunk(in, out int) string {
	b, _ := json.Marshal(map[string]any{"id": "resp1", "object": "chat.completion.chunk", "choices": []any{},
		"usage": map[string]int{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}})
	return string(b)
}

// collect runs one request and returns what streamed, folded for comparison.
type result struct {
	thought, text string
	calls         []ToolCall
	usage         *Usage
	finish        Finish
	retries       []*RetryInfo
	discards      int
	notices       []string // EventNotice texts
	err           error
}

func collectStream(t *testing.T, p Provider, req *Request) result {
	t.Helper()
	if req == nil {
		req = &Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}
	}
	var r result
	for ev, err := range p.Stream(t.Context(), req) {
		if err != nil {
			r.err = err
			break
		}
		switch ev.Kind {
		case EventThought:
			r.thought += ev.Text
		case EventText:
			r.text += ev.Text
		case EventToolCall:
			r.calls = append(r.calls, *ev.ToolCall)
		case EventUsage:
			u := *ev.Usage
			r.usage = &u
		case EventFinish:
			r.finish = ev.Finish
		case EventRetry:
			r.retries = append(r.retries, ev.Retry)
		case EventDiscard:
			r.discards++
			r.thought, r.text, r.calls, r.usage = "", "", nil, nil
		}
	}
	return r
}

func provider(t *testing.T, url string, mod func(*OpenAIOptions)) *OpenAI {
	t.Helper()
	o := OpenAIOptions{BaseURL: url, Model: "test-model", APIKey: "sk-test", APIKeyEnv: "TEST_API_KEY", ContextWindow: 1000}
	if mod != nil {
		mod(&o)
	}
	p, err := NewOpenAI(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenAIStream(t *testing.T) {
	tests := []struct {
		name string
		play sse
		want result
	}{{
		name: "reasoning then text, usage, split mid-line",
		play: sse{split: 7, events: []string{
			chunk(`{"role":"assistant","reasoning_content":""}`, ""),
			chunk(`{"reasoning_content":"Let me "}`, ""),
			chunk(`{"reasoning_content":"think."}`, ""),
			chunk(`{"content":"Hello, "}`, ""),
			chunk(`{"content":"wörld ✓"}`, ""),
			chunk(`{}`, "stop"),
			usageChunk(12, 5),
		}},
		want: result{thought: "Let me think.", text: "Hello, wörld ✓", usage: &Usage{InputTokens: 12, OutputTokens: 5, ContextWindow: 1000}, finish: FinishStop},
	}, {
		name: "tool-call deltas across chunks",
		play: sse{split: 11, events: []string{
			chunk(`{"content":"Reading."}`, ""),
			chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"file_"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"grep","arguments":"{\"pattern\":"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"path\":\"go.mod\"}"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"\"TODO\"}"}}]}`, ""),
			chunk(`{}`, "tool_calls"),
			usageChunk(30, 20),
		}},
		want: result{text: "Reading.", calls: []ToolCall{
			{ID: "call_a", Name: "read", Arguments: json.RawMessage(`{"file_path":"go.mod"}`)},
			{ID: "call_b", Name: "grep", Arguments: json.RawMessage(`{"pattern":"TODO"}`)},
		}, usage: &Usage{InputTokens: 30, OutputTokens: 20, ContextWindow: 1000}, finish: FinishToolCalls},
	}, {
		name: "a whole call in one delta without index or id, finish stop",
		play: sse{events: []string{
			chunk(`{"tool_calls":[{"type":"function","function":{"name":"read","arguments":"{\"file_path\":\"a\"}"}}]}`, ""),
			chunk(`{}`, "stop"),
			usageChunk(3, 4),
		}},
		want: result{calls: []ToolCall{{ID: "call_resp1_1", Name: "read", Arguments: json.RawMessage(`{"file_path":"a"}`)}},
			usage: &Usage{InputTokens: 3, OutputTokens: 4, ContextWindow: 1000}, finish: FinishToolCalls},
	}, {
		name: "length",
		play: sse{events: []string{chunk(`{"content":"cut"}`, "length"), usageChunk(1, 1)}},
		want: result{text: "cut", usage: &Usage{InputTokens: 1, OutputTokens: 1, ContextWindow: 1000}, finish: FinishLength},
	}, {
		name: "content filter",
		play: sse{events: []string{chunk(`{"content":""}`, "content_filter"), usageChunk(1, 0)}},
		want: result{usage: &Usage{InputTokens: 1, OutputTokens: 0, ContextWindow: 1000}, finish: FinishContentFilter},
	}, {
		name: "DeepSeek's prompt cache hits, the usage line split in pieces",
		play: sse{split: 5, events: []string{chunk(`{"content":"ok"}`, "stop"),
			`{"id":"resp1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":900,"completion_tokens":3,"total_tokens":903,"prompt_cache_hit_tokens":768,"prompt_cache_miss_tokens":132}}`}},
		want: result{text: "ok", usage: &Usage{InputTokens: 900, OutputTokens: 3, ContextWindow: 1000, CachedTokens: 768}, finish: FinishStop},
	}, {
		name: "OpenAI's cached tokens",
		play: sse{events: []string{chunk(`{"content":"ok"}`, "stop"),
			`{"id":"resp1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":2048,"completion_tokens":3,"total_tokens":2051,"prompt_tokens_details":{"cached_tokens":1920}}}`}},
		want: result{text: "ok", usage: &Usage{InputTokens: 2048, OutputTokens: 3, ContextWindow: 1000, CachedTokens: 1920}, finish: FinishStop},
	}, {
		name: "no usage from the endpoint: estimated",
		play: sse{events: []string{chunk(`{"content":"12345678"}`, "stop")}},
		want: result{text: "12345678", usage: &Usage{InputTokens: 2, OutputTokens: 2, ContextWindow: 1000, Estimated: true}, finish: FinishStop},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, srv := newMock(t, tc.play)
			got := collectStream(t, provider(t, srv.URL, nil), nil)
			compare(t, got, tc.want)
		})
	}
}

func compare(t *testing.T, got, want result) {
	t.Helper()
	if got.err != nil || want.err != nil {
		if (got.err == nil) != (want.err == nil) {
			t.Fatalf("err = %v, want %v", got.err, want.err)
		}
	}
	if got.thought != want.thought || got.text != want.text || got.finish != want.finish {
		t.Errorf("thought %q text %q finish %q; want %q %q %q", got.thought, got.text, got.finish, want.thought, want.text, want.finish)
	}
	gc, _ := json.Marshal(got.calls)
	wc, _ := json.Marshal(want.calls)
	if string(gc) != string(wc) {
		t.Errorf("calls = %s\nwant    %s", gc, wc)
	}
	gu, _ := json.Marshal(got.usage)
	wu, _ := json.Marshal(want.usage)
	if string(gu) != string(wu) {
		t.Errorf("usage = %s, want %s", gu, wu)
	}
}

func TestOpenAIRequestBody(t *testing.T) {
	for _, images := range []bool{false, true} {
		m, srv := newMock(t, sse{events: []string{chunk(`{"content":"ok"}`, "stop")}})
		p := provider(t, srv.URL, func(o *OpenAIOptions) { o.Images = images; o.MaxTokens = 77 })
		req := &Request{
			Messages: []Message{
				{Role: RoleSystem, Content: "sys"},
				{Role: RoleUser, Content: "look", Images: []Image{{MimeType: "image/png", Data: "iVBO"}}},
				{Role: RoleAssistant, Reasoning: "I should read.", ToolCalls: []ToolCall{{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"file_path":"x"}`)}}},
				{Role: RoleTool, ToolCallID: "c1", Content: ""},
			},
			Tools: []ToolSpec{{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object"}`)}},
		}
		if r := collectStream(t, p, req); r.err != nil {
			t.Fatal(r.err)
		}
		body := m.bodies[0]
		if body["stream"] != true || body["model"] != "test-model" || body["max_tokens"] != float64(77) {
			t.Errorf("stream/model/max_tokens = %v %v %v", body["stream"], body["model"], body["max_tokens"])
		}
		if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
			t.Errorf("stream_options = %v, want include_usage", body["stream_options"])
		}
		msgs := body["messages"].([]any)
		asst := msgs[2].(map[string]any)
		if asst["reasoning_content"] != "I should read." {
			t.Errorf("assistant reasoning not sent back: %v", asst)
		}
		tcs := asst["tool_calls"].([]any)
		if fn := tcs[0].(map[string]any)["function"].(map[string]any); fn["arguments"] != `{"file_path":"x"}` || fn["name"] != "read" {
			t.Errorf("tool call = %v", fn)
		}
		if tool := msgs[3].(map[string]any); tool["content"] != "(no output)" || tool["tool_call_id"] != "c1" {
			t.Errorf("tool message = %v", tool)
		}
		user := msgs[1].(map[string]any)
		_, multi := user["content"].([]any)
		if multi != images {
			t.Errorf("images=%v: user content = %v", images, user["content"])
		}
		if m.auth[0] != "Bearer sk-test" {
			t.Errorf("Authorization = %q", m.auth[0])
		}
		tools := body["tools"].([]any)
		if fn := tools[0].(map[string]any)["function"].(map[string]any); fn["name"] != "read" || fn["description"] != "Read a file" {
			t.Errorf("tools = %v", tools)
		}
	}
}

// recordSleep replaces the backoff wait: it records each delay and returns at once.
type recordSleep struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (r *recordSleep) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.delays = append(r.delays, d)
	r.mu.Unlock()
	return ctx.Err()
}

func TestOpenAIFailures(t *testing.T) {
	ok := sse{events: []string{chunk(`{"content":"fine"}`, "stop"), usageChunk(2, 1)}}
	tests := []struct {
		name      string
		plays     []sse
		idle      time.Duration
		wantKind  ErrorKind // of the final error; "" = success
		wantText  string
		wantCalls int             // requests the endpoint saw
		wantDelay []time.Duration // exact delays (Retry-After); nil: only count
		retries   int
		inError   []string // substrings of the final error
	}{{
		name:      "401 names the variable and is not retried",
		plays:     []sse{{status: 401, body: `{"error":{"message":"Authentication Fails (no such user)","type":"authentication_error"}}`}},
		wantKind:  ErrAuth,
		wantCalls: 1,
		inError:   []string{"TEST_API_KEY", "HTTP 401", "Authentication Fails"},
	}, {
		name:      "403 without a JSON body",
		plays:     []sse{{status: 403, body: `forbidden`}},
		wantKind:  ErrAuth,
		wantCalls: 1,
		inError:   []string{"TEST_API_KEY", "HTTP 403"},
	}, {
		name: "429 honours Retry-After, then succeeds",
		plays: []sse{
			{status: 429, header: map[string]string{"Retry-After": "3"}, body: `{"error":{"message":"slow down"}}`},
			{status: 429, header: map[string]string{"Retry-After": "1.5"}, body: `{"error":{"message":"slow down"}}`},
			ok,
		},
		wantText:  "fine",
		wantCalls: 3,
		wantDelay: []time.Duration{3 * time.Second, 1500 * time.Millisecond},
	}, {
		name:      "500 every time: gives up after the retries",
		plays:     []sse{{status: 500, body: `{"error":{"message":"overloaded"}}`}},
		retries:   3,
		wantKind:  ErrServer,
		wantCalls: 4,
		inError:   []string{"gave up after 4 attempts", "HTTP 500", "overloaded"},
	}, {
		name:      "stream stalls, retry succeeds",
		plays:     []sse{{events: []string{chunk(`{"content":"par"}`, "")}, stall: true}, ok},
		idle:      150 * time.Millisecond,
		wantText:  "fine",
		wantCalls: 2,
	}, {
		name:      "connection cut mid-stream, retry succeeds",
		plays:     []sse{{events: []string{chunk(`{"content":"par"}`, "")}, hangup: true}, ok},
		wantText:  "fine",
		wantCalls: 2,
	}, {
		name:      "stream ends without a finish reason or [DONE]",
		plays:     []sse{{events: []string{chunk(`{"content":"par"}`, "")}, noDone: true}},
		retries:   1,
		wantKind:  ErrTransport,
		wantCalls: 2,
		inError:   []string{"before the response was complete"},
	}, {
		name:      "error event inside the stream",
		plays:     []sse{{events: []string{chunk(`{"content":"a"}`, ""), `{"error":{"message":"upstream died","type":"server_error"}}`}, noDone: true}, ok},
		wantText:  "fine",
		wantCalls: 2,
	}, {
		name:      "DeepSeek insufficient_system_resource is retried",
		plays:     []sse{{events: []string{chunk(`{"content":"half"}`, "insufficient_system_resource")}}, ok},
		wantText:  "fine",
		wantCalls: 2,
	}, {
		name:      "an empty answer is retried",
		plays:     []sse{{events: []string{chunk(`{"content":""}`, "stop"), usageChunk(5, 0)}}, ok},
		wantText:  "fine",
		wantCalls: 2,
	}, {
		name:      "400 context length is not retried",
		plays:     []sse{{status: 400, body: `{"error":{"message":"This model's maximum context length is 65536 tokens"}}`}},
		wantKind:  ErrContextWindow,
		wantCalls: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, srv := newMock(t, tc.plays...)
			p := provider(t, srv.URL, func(o *OpenAIOptions) { o.IdleTimeout = tc.idle })
			rs := &recordSleep{}
			retries := tc.retries
			if retries == 0 {
				retries = 5
			}
			got := collectStream(t, Retry(p, RetryOptions{Retries: retries, Sleep: rs.sleep}), nil)
			if m.requests() != tc.wantCalls {
				t.Errorf("endpoint saw %d requests, want %d", m.requests(), tc.wantCalls)
			}
			if len(got.retries) != tc.wantCalls-1 {
				t.Errorf("%d retry events, want %d", len(got.retries), tc.wantCalls-1)
			}
			for i, r := range got.retries {
				if r.Attempt != i+2 || r.Max != retries+1 || r.Err == nil {
					t.Errorf("retry %d = %+v", i, r)
				}
			}
			if tc.wantDelay != nil && !equalDurations(rs.delays, tc.wantDelay) {
				t.Errorf("delays = %v, want %v", rs.delays, tc.wantDelay)
			}
			if tc.wantKind == "" {
				if got.err != nil || got.text != tc.wantText || got.finish != FinishStop {
					t.Fatalf("got err=%v text=%q finish=%q, want text %q", got.err, got.text, got.finish, tc.wantText)
				}
				return
			}
			var me *Error
			if !errors.As(got.err, &me) || me.Kind != tc.wantKind {
				t.Fatalf("err = %v, want kind %s", got.err, tc.wantKind)
			}
			for _, s := range tc.inError {
				if !strings.Contains(got.err.Error(), s) {
					t.Errorf("error %q lacks %q", got.err, s)
				}
			}
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestOpenAIMissingKey(t *testing.T) {
	m, srv := newMock(t, sse{events: []string{chunk(`{"content":"x"}`, "stop")}})
	p := provider(t, srv.URL, func(o *OpenAIOptions) { o.APIKey = ""; o.RequireKey = true; o.APIKeyEnv = "DEEPSEEK_API_KEY" })
	got := collectStream(t, Retry(p, RetryOptions{}), nil)
	var me *Error
	if !errors.As(got.err, &me) || me.Kind != ErrAuth || !strings.Contains(got.err.Error(), "DEEPSEEK_API_KEY") {
		t.Fatalf("err = %v, want an auth error naming DEEPSEEK_API_KEY", got.err)
	}
	if m.requests() != 0 {
		t.Errorf("a request was sent without a key")
	}
	// A local server needs no key: the request goes out without one.
	p = provider(t, srv.URL, func(o *OpenAIOptions) { o.APIKey = "" })
	if got := collectStream(t, p, nil); got.err != nil || got.text != "x" || m.auth[0] != "" {
		t.Fatalf("keyless request: err=%v text=%q auth=%q", got.err, got.text, m.auth[0])
	}
}

func TestOpenAICancel(t *testing.T) {
	_, srv := newMock(t, sse{events: []string{chunk(`{"content":"a"}`, "")}, stall: true})
	p := Retry(provider(t, srv.URL, nil), RetryOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var err error
	for ev, e := range p.Stream(ctx, &Request{}) {
		if e != nil {
			err = e
			break
		}
		if ev.Kind == EventText {
			cancel()
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled (and no retry)", err)
	}
}

func TestRetryDelay(t *testing.T) {
	r := Retry(nil, RetryOptions{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, MaxRetryAfter: 5 * time.Second}).(*retrying)
	plain := &Error{Kind: ErrServer}
	for attempt, base := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 30: time.Second} {
		for range 50 {
			d := r.delay(attempt, plain)
			if lo, hi := time.Duration(float64(base)*0.8), time.Duration(float64(base)*1.2); d < lo || d > hi {
				t.Fatalf("attempt %d: delay %v outside [%v, %v]", attempt, d, lo, hi)
			}
		}
	}
	if d := r.delay(1, &Error{Kind: ErrRateLimit, RetryAfter: 4 * time.Second}); d != 4*time.Second {
		t.Errorf("Retry-After 4s: delay %v", d)
	}
	if d := r.delay(1, &Error{Kind: ErrRateLimit, RetryAfter: time.Hour}); d >= 0 {
		t.Errorf("Retry-After past the cap: delay %v, want negative (give up)", d)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"7":                             7 * time.Second,
		"0.25":                          250 * time.Millisecond,
		"-3":                            0,
		"soon":                          0,
		"Thu, 01 Jan 2026 12:00:09 GMT": 9 * time.Second,
		"Thu, 01 Jan 2026 11:00:00 GMT": 0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestOpenAIUnreachable: nothing listens at the address; that is not
// worth retrying, and the error names the URL and the likely fix.
func TestOpenAIUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	rs := &recordSleep{}
	got := collectStream(t, Retry(provider(t, url, nil), RetryOptions{Retries: 2, Sleep: rs.sleep}), nil)
	var me *Error
	if !errors.As(got.err, &me) || me.Kind != ErrUnreachable || len(got.retries) != 0 {
		t.Fatalf("err = %v (%d retries), want an unreachable error without retries", got.err, len(got.retries))
	}
	for _, s := range []string{url + "/chat/completions", "connection refused", "Is the server running"} {
		if !strings.Contains(got.err.Error(), s) {
			t.Errorf("error %q lacks %q", got.err, s)
		}
	}
}

func TestOpenAIMaxTokensField(t *testing.T) {
	for model, field := range map[string]string{"gpt-4.1": "max_tokens", "o3-mini": "max_completion_tokens", "gpt-6-sol": "max_completion_tokens", "deepseek-chat": "max_tokens"} {
		m, srv := newMock(t, sse{events: []string{chunk(`{"content":"ok"}`, "stop")}})
		p := provider(t, srv.URL, func(o *OpenAIOptions) { o.Model = model; o.MaxTokens = 99 })
		if r := collectStream(t, p, nil); r.err != nil {
			t.Fatalf("%s: %v", model, r.err)
		}
		if m.bodies[0][field] != float64(99) {
			t.Errorf("%s: %s = %v in %v", model, field, m.bodies[0][field], m.bodies[0])
		}
	}
}

// reasoning_effort goes to the models that take one (ReasoningEfforts)
// and to no other: an endpoint may refuse a field its model does not know.
func TestOpenAIReasoningEffort(t *testing.T) {
	for model, want := range map[string]any{"o3-mini": "high", "gpt-5": "high", "deepseek-chat": nil, "gpt-4.1": nil} {
		m, srv := newMock(t, sse{events: []string{chunk(`{"content":"ok"}`, "stop")}})
		p := provider(t, srv.URL, func(o *OpenAIOptions) { o.Model = model })
		req := &Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}, ReasoningEffort: "high"}
		if r := collectStream(t, p, req); r.err != nil {
			t.Fatalf("%s: %v", model, r.err)
		}
		if got := m.bodies[0]["reasoning_effort"]; got != want {
			t.Errorf("%s: reasoning_effort = %v, want %v", model, got, want)
		}
		if takes := ReasoningEfforts(model) != nil; takes != (want != nil) {
			t.Errorf("%s: ReasoningEfforts = %v", model, ReasoningEfforts(model))
		}
	}
}

// TestOpenAIKeepAlive: comment lines are activity; a stream that sends only
// them for longer than the idle timeout is slow, not stalled.
func TestOpenAIKeepAlive(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for range 8 {
			io.WriteString(w, ": keep-alive\n\n")
			fl.Flush()
			time.Sleep(40 * time.Millisecond)
		}
		io.WriteString(w, "data: "+chunk(`{"content":"late"}`, "stop")+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	p := provider(t, srv.URL, func(o *OpenAIOptions) { o.IdleTimeout = 150 * time.Millisecond })
	got := collectStream(t, Retry(p, RetryOptions{Retries: -1}), nil)
	if got.err != nil || got.text != "late" {
		t.Fatalf("err = %v text = %q; keep-alives must hold the stream open", got.err, got.text)
	}
}

// TestOpenAILibraryRefusal: a request go-openai refuses to send (a model it
// knows serves no chat completions) is an invalid request, not retried,
// and nothing reaches the endpoint.
func TestOpenAILibraryRefusal(t *testing.T) {
	m, srv := newMock(t, sse{events: []string{chunk(`{"content":"x"}`, "stop")}})
	p := provider(t, srv.URL, func(o *OpenAIOptions) { o.Model = "text-davinci-003" })
	got := collectStream(t, Retry(p, RetryOptions{}), nil)
	var me *Error
	if !errors.As(got.err, &me) || me.Kind != ErrInvalidRequest || len(got.retries) != 0 || !strings.Contains(got.err.Error(), srv.URL) {
		t.Fatalf("err = %v (%d retries), want an invalid request naming the URL", got.err, len(got.retries))
	}
	if m.requests() != 0 {
		t.Errorf("%d requests reached the endpoint", m.requests())
	}
}
