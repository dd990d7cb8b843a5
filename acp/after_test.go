package acp

import (
	"context"
	"encoding/json"
	"testing"
)

// What a handler defers with AfterResponse goes out after its response, even
// when it is registered early and the handler itself sends updates.
func TestAfterResponseFollowsTheResponse(t *testing.T) {
	var conn *Conn
	a := &fakeAgent{newSession: func(ctx context.Context, r *NewSessionRequest) (*NewSessionResponse, error) {
		if !AfterResponse(ctx, func() {
			_ = conn.SessionUpdate(context.Background(), "s1", AgentMessageChunk{Content: TextBlock("after")})
		}) {
			t.Error("a request context has no AfterResponse")
		}
		_ = conn.SessionUpdate(ctx, "s1", AgentMessageChunk{Content: TextBlock("before")})
		return &NewSessionResponse{SessionID: "s1"}, nil
	}}
	p := newPipePair(t, a, nil)
	conn = p.conn
	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	var order []string
	for range 3 {
		m := p.recv()
		switch {
		case m.Method == MethodSessionUpdate:
			var n struct {
				Update struct{ Content struct{ Text string } }
			}
			_ = json.Unmarshal(m.Params, &n)
			order = append(order, n.Update.Content.Text)
		case string(m.ID) == "1":
			order = append(order, "response")
		}
	}
	if want := []string{"before", "response", "after"}; !equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if AfterResponse(context.Background(), func() { t.Error("ran without a request") }) {
		t.Error("AfterResponse accepted a context without a request")
	}
}

func equal(a, b []string) bool {
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
