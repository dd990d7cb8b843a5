package model

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // event name + "|" + data
		err  error    // after the events
	}{
		{"blank-line separated", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []string{`|{"a":1}`, "|[DONE]"}, io.EOF},
		{"CRLF and no space after the colon", "data:{\"a\":1}\r\n\r\n", []string{`|{"a":1}`}, io.EOF},
		{"comments and ids ignored", ": ping\nid: 7\nretry: 100\ndata: {}\n\n", []string{"|{}"}, io.EOF},
		{"no blank lines between events", "data: {\"a\":1}\ndata: {\"a\":2}\n", []string{`|{"a":1}`, `|{"a":2}`}, io.EOF},
		{"one event over several data lines", "data: {\"a\":\ndata: 1}\n\n", []string{"|{\"a\":\n1}"}, io.EOF},
		{"a named error event", "event: error\ndata: {\"message\":\"x\"}\n\n", []string{`error|{"message":"x"}`}, io.EOF},
		{"the last event without its blank line", "data: {}", []string{"|{}"}, io.EOF},
		{"an HTML page", "<!doctype html>\n<html>", nil, errNotSSE},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newSSEReader(strings.NewReader(tc.in))
			var got []string
			var err error
			for {
				var ev sseEvent
				ev, err = r.next()
				if err != nil {
					break
				}
				got = append(got, ev.name+"|"+string(ev.data))
			}
			if strings.Join(got, "\n--\n") != strings.Join(tc.want, "\n--\n") || !errors.Is(err, tc.err) {
				t.Errorf("got %q, %v; want %q, %v", got, err, tc.want, tc.err)
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
