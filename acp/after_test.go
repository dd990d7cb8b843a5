package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
)

// afterAgent sends an update for the new session once the client has the
// session/new response.
type afterAgent struct {
	Agent
	client Client
}

func (a *afterAgent) NewSession(ctx context.Context, req *NewSessionRequest) (*NewSessionResponse, error) {
	AfterReply(ctx, func() {
		a.client.SessionUpdate(context.Background(), "s1", AvailableCommandsUpdate{AvailableCommands: []AvailableCommand{}})
	})
	return &NewSessionResponse{SessionID: "s1"}, nil
}

func TestAfterReplyFollowsTheResponse(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := NewConn(t.Context(), func(cl Client) Agent { return &afterAgent{client: cl} }, inR, outW, inR, nil)
	t.Cleanup(func() { inW.Close(); c.Close(); outR.Close() })

	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`+"\n")
	sc := bufio.NewScanner(outR)
	var order []string
	for len(order) < 2 && sc.Scan() {
		var m struct {
			ID     *int   `json:"id"`
			Method string `json:"method"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m.ID != nil {
			order = append(order, "response")
		} else {
			order = append(order, m.Method)
		}
	}
	if len(order) != 2 || order[0] != "response" || order[1] != MethodSessionUpdate {
		t.Fatalf("order = %v, want the response, then session/update", order)
	}
}

func TestAfterReplyWithoutARequestRunsNow(t *testing.T) {
	ran := false
	AfterReply(t.Context(), func() { ran = true })
	if !ran {
		t.Fatal("AfterReply outside a request did not run")
	}
}
