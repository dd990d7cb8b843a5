package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"testing"
)

type wireTestAgent struct{}

func (wireTestAgent) Initialize(context.Context, *InitializeRequest) (*InitializeResponse, error) {
	return &InitializeResponse{ProtocolVersion: ProtocolVersion}, nil
}
func (wireTestAgent) Authenticate(context.Context, *AuthenticateRequest) (*AuthenticateResponse, error) {
	return nil, InvalidParams("none")
}
func (wireTestAgent) NewSession(context.Context, *NewSessionRequest) (*NewSessionResponse, error) {
	return nil, InvalidParams("none")
}
func (wireTestAgent) Prompt(context.Context, *PromptRequest) (*PromptResponse, error) {
	return nil, InvalidParams("none")
}
func (wireTestAgent) Cancel(context.Context, *CancelNotification) {}

// TestSessionUpdateLine: the line SessionUpdate writes itself is the
// notification jsonrpc2 would have written, and nothing goes out once the
// connection is closed.
func TestSessionUpdateLine(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	conn := NewConn(t.Context(), func(Client) Agent { return wireTestAgent{} }, inR, outW, inR, nil)
	lines := make(chan []byte, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	line, status := 3, StatusFailed
	title := `a "quoted" <title> & more`
	updates := []Update{
		AgentMessageChunk{Content: TextBlock("hello <world> \u2028 ünïcode")},
		ToolCall{ToolCallID: "c1", Title: "Read a.go", Kind: KindRead, Status: StatusPending,
			Locations: []ToolCallLocation{{Path: "/w/a.go", Line: &line}}, RawInput: json.RawMessage(`{"file_path": "a.go"}`)},
		ToolCallUpdate{ToolCallID: "c1", Status: &status, Title: &title, Meta: Meta{"terminal_exit": map[string]any{"exit_code": 1}}},
	}
	for _, u := range updates {
		if err := conn.SessionUpdate(t.Context(), "s1", u); err != nil {
			t.Fatal(err)
		}
		got := <-lines
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			Method  string          `json:"method"`
			ID      json.RawMessage `json:"id"`
			Params  json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(got, &msg); err != nil {
			t.Fatalf("not JSON: %s", got)
		}
		if msg.JSONRPC != "2.0" || msg.Method != MethodSessionUpdate || msg.ID != nil {
			t.Errorf("envelope of %s", got)
		}
		want, _ := json.Marshal(SessionNotification{SessionID: "s1", Update: u})
		var a, b any
		json.Unmarshal(msg.Params, &a)
		json.Unmarshal(want, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("params\n got %s\nwant %s", msg.Params, want)
		}
	}
	inW.Close()
	conn.Wait()
	if err := conn.SessionUpdate(context.Background(), "s1", updates[0]); err == nil {
		t.Error("an update after the connection closed was accepted")
	}
	outW.Close()
	for l := range lines {
		t.Errorf("written after close: %s", l)
	}
}
