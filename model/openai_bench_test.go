package model

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkOpenAIStream measures decoding one streamed response of 1000
// text deltas and a 200-piece tool call from a local endpoint: the cost the
// bridge adds per response, network aside.
func BenchmarkOpenAIStream(b *testing.B) {
	var body strings.Builder
	for i := range 1000 {
		body.WriteString("data: " + chunk(fmt.Sprintf(`{"content":"token%d "}`, i), "") + "\n\n")
	}
	body.WriteString("data: " + chunk(`{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"edit","arguments":""}}]}`, "") + "\n\n")
	for range 200 {
		body.WriteString("data: " + chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"xxxxxxxxxx"}}]}`, "") + "\n\n")
	}
	body.WriteString("data: " + chunk(`{}`, "tool_calls") + "\n\n")
	body.WriteString("data: " + usageChunk(100, 1000) + "\n\ndata: [DONE]\n\n")
	payload := body.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, payload)
	}))
	defer srv.Close()
	p, err := NewOpenAI(OpenAIOptions{BaseURL: srv.URL, Model: "m", APIKey: "k"})
	if err != nil {
		b.Fatal(err)
	}
	req := &Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for ev, err := range p.Stream(b.Context(), req) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == EventText {
				n++
			}
		}
		if n != 1000 {
			b.Fatalf("%d text events", n)
		}
	}
}
