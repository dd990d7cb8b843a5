package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		// What the notification encoded as before, by encoding/json alone.
		body, _ := json.Marshal(u)
		upd := append([]byte(`{"sessionUpdate":`+quote(u.UpdateKind())+`,`), body[1:]...)
		want, _ := json.Marshal(struct {
			SessionID string          `json:"sessionId"`
			Update    json.RawMessage `json:"update"`
		}{"s1", upd})
		if string(msg.Params) != string(want) {
			t.Errorf("params differ byte for byte:\n got %s\nwant %s", msg.Params, want)
		}
		var a, b any
		json.Unmarshal(msg.Params, &a)
		json.Unmarshal(want, &b)
		if cmp.Diff(a, b) != "" {
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

// TestSessionNotificationEncoding: the hand-assembled encoding is byte for
// byte what encoding/json gives the same wrapper, _meta included.
func TestSessionNotificationEncoding(t *testing.T) {
	status := StatusCompleted
	for _, n := range []SessionNotification{
		{SessionID: "s", Update: AgentThoughtChunk{Content: TextBlock("<think> & \u2029")}},
		{SessionID: "s\"2", Update: ToolCallUpdate{ToolCallID: "c", Status: &status}, Meta: Meta{"trace": "a<b", "n": 1}},
		{SessionID: "s", Update: UsageUpdate{}},
	} {
		got, err := n.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(n.Update)
		upd := []byte(`{"sessionUpdate":` + quote(n.Update.UpdateKind()))
		if string(body) != "{}" {
			upd = append(upd, ',')
		}
		upd = append(upd, body[1:]...)
		want, _ := json.Marshal(struct {
			SessionID string          `json:"sessionId"`
			Update    json.RawMessage `json:"update"`
			Meta      Meta            `json:"_meta,omitempty"`
		}{n.SessionID, upd, n.Meta})
		if string(got) != string(want) {
			t.Errorf("\n got %s\nwant %s", got, want)
		}
	}
}
