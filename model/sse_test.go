package model

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStreamFraming: what the endpoint writes, byte for byte, and what the
// provider makes of it through go-openai's stream reader.
func TestStreamFraming(t *testing.T) {
	ok := chunk(`{"content":"a"}`, "stop")
	long := strings.Repeat("x", 100<<10) // longer than any read buffer on the way
	tests := []struct {
		name     string
		ctype    string // default text/event-stream
		in       string
		text     string
		kind     ErrorKind // "" = success
		inError  string
		requests int // 1 unless retried
	}{
		{name: "blank-line separated", in: "data: " + ok + "\n\ndata: [DONE]\n\n", text: "a"},
		{name: "CRLF and no space after the colon", in: "data:" + ok + "\r\n\r\ndata:[DONE]\r\n\r\n", text: "a"},
		{name: "comments and ids ignored", in: ": ping\nid: 7\nretry: 100\ndata: " + ok + "\n\n", text: "a"},
		{name: "no blank lines between events", in: "data: " + chunk(`{"content":"a"}`, "") + "\ndata: " + chunk(`{"content":"b"}`, "stop") + "\n", text: "ab"},
		{name: "one event over several data lines", in: "data: {\"id\":\"r\",\"choices\":[{\"index\":0,\ndata: \"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\n", text: "a"},
		{name: "a named error event", in: "data: " + chunk(`{"content":"a"}`, "") + "\n\nevent: error\ndata: {\"message\":\"x\"}\n\n", kind: ErrServer, inError: ": x", requests: 3},
		{name: "the last event without its blank line", in: "data: " + ok, text: "a"},
		{name: "an HTML page", ctype: "-", in: "<!doctype html>\n<html><title>Portal</title>", kind: ErrNotAPI, inError: `"Portal"`},
		{name: "NDJSON", ctype: "application/x-ndjson", in: `{"model":"m","message":{"content":"a"}}` + "\n", kind: ErrNotAPI, inError: `it answered {"model"`},
		{name: "an error after keep-alive comments", in: ": keep-alive\n\ndata: " + chunk(`{"content":"a"}`, "") + "\n\n: keep-alive\n\ndata: {\"error\":{\"message\":\"upstream died\",\"type\":\"server_error\"}}\n\ndata: [DONE]\n\n",
			kind: ErrServer, inError: "upstream died", requests: 3},
		{name: "an error that is a bare string", in: "data: {\"error\":\"model is loading\"}\n\n", kind: ErrServer, inError: "model is loading", requests: 3},
		{name: "an error alone with OpenRouter's metadata", in: ": OPENROUTER PROCESSING\n\ndata: {\"error\":{\"code\":429,\"message\":\"Rate limit exceeded\",\"metadata\":{\"provider_name\":\"Chutes\"}}}\n\n",
			kind: ErrRateLimit, inError: "Rate limit exceeded (Chutes)", requests: 3},
		{name: "a chunk longer than the read buffers", in: "data: " + chunk(`{"content":"`+long+`"}`, "stop") + "\n\n", text: long},
		{name: "a chunk that is not JSON", in: "data: {\"id\":\n\ndata: {\"id\":\"r\"}\n\n", kind: ErrMalformed, inError: "not JSON"},
		{name: "an event cut off at the end", in: "data: {\"id\":\"r\",", kind: ErrMalformed, inError: "not JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			n := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				n++
				mu.Unlock()
				switch tc.ctype {
				case "":
					w.Header().Set("Content-Type", "text/event-stream")
				case "-":
					w.Header()["Content-Type"] = nil // no sniffing by net/http either
				default:
					w.Header().Set("Content-Type", tc.ctype)
				}
				io.WriteString(w, tc.in)
			}))
			defer srv.Close()
			rs := &recordSleep{}
			got := collectStream(t, Retry(provider(t, srv.URL, nil), RetryOptions{Retries: 2, Sleep: rs.sleep}), nil)
			want := max(tc.requests, 1)
			if n != want {
				t.Errorf("%d requests, want %d", n, want)
			}
			if tc.kind == "" {
				if got.err != nil || got.text != tc.text || got.finish != FinishStop {
					t.Fatalf("err = %v, text %q, finish %q; want text %q", got.err, truncate(got.text, 40), got.finish, truncate(tc.text, 40))
				}
				return
			}
			var me *Error
			if !errors.As(got.err, &me) || me.Kind != tc.kind || !strings.Contains(got.err.Error(), tc.inError) {
				t.Fatalf("err = %v, want kind %s with %q", got.err, tc.kind, tc.inError)
			}
		})
	}
}

// TestOpenAIHungEndpoint: a server that accepts the request and never
// answers is reported as stalled after the idle timeout, naming the URL.
func TestOpenAIHungEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body); <-r.Context().Done() }))
	defer srv.Close()
	p := provider(t, srv.URL, func(o *OpenAIOptions) { o.IdleTimeout = 100 * time.Millisecond })
	got := collectStream(t, Retry(p, RetryOptions{Retries: -1}), nil)
	var me *Error
	if !errors.As(got.err, &me) || me.Kind != ErrStalled || !strings.Contains(got.err.Error(), srv.URL) {
		t.Fatalf("err = %v, want a stall naming %s", got.err, srv.URL)
	}
}

// TestOpenAIWholeResponse: a server that ignores stream: true and answers
// with one JSON object is read all the same.
func TestOpenAIWholeResponse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"whole","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`)
	}))
	defer srv.Close()
	got := collectStream(t, provider(t, srv.URL, nil), nil)
	if got.err != nil || got.text != "whole" || len(got.calls) != 1 || got.finish != FinishToolCalls || got.usage.InputTokens != 3 {
		t.Fatalf("got %+v", got)
	}
}

func TestBaseURLHint(t *testing.T) {
	for base, want := range map[string]string{
		"http://localhost:11434":                                   "lacks /v1: try http://localhost:11434/v1",
		"http://localhost:11434/api":                               "should end in /v1 (e.g. http://localhost:11434/v1)",
		"http://localhost:8000/v1":                                 "Check the base URL (http://localhost:8000/v1)",
		"https://generativelanguage.googleapis.com/v1beta/openai/": "Check the base URL",
	} {
		p, err := NewOpenAI(OpenAIOptions{BaseURL: base, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.baseURLHint(); !strings.Contains(got, want) {
			t.Errorf("%s: hint %q lacks %q", base, got, want)
		}
	}
}
