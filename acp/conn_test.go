package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeAgent is an Agent whose methods are function fields.
type fakeAgent struct {
	initialize func(context.Context, *InitializeRequest) (*InitializeResponse, error)
	newSession func(context.Context, *NewSessionRequest) (*NewSessionResponse, error)
	prompt     func(context.Context, *PromptRequest) (*PromptResponse, error)
	cancel     func(context.Context, *CancelNotification)
	admitLate  bool // prompt calls Admitted itself
}

func (f *fakeAgent) Initialize(ctx context.Context, r *InitializeRequest) (*InitializeResponse, error) {
	if f.initialize != nil {
		return f.initialize(ctx, r)
	}
	return &InitializeResponse{ProtocolVersion: 1, AuthMethods: []AuthMethod{}}, nil
}
func (f *fakeAgent) Authenticate(context.Context, *AuthenticateRequest) (*AuthenticateResponse, error) {
	return &AuthenticateResponse{}, nil
}
func (f *fakeAgent) NewSession(ctx context.Context, r *NewSessionRequest) (*NewSessionResponse, error) {
	if f.newSession != nil {
		return f.newSession(ctx, r)
	}
	return &NewSessionResponse{SessionID: "s1"}, nil
}
func (f *fakeAgent) Prompt(ctx context.Context, r *PromptRequest) (*PromptResponse, error) {
	if !f.admitLate {
		Admitted(ctx)
	}
	return f.prompt(ctx, r)
}
func (f *fakeAgent) Cancel(ctx context.Context, r *CancelNotification) {
	if f.cancel != nil {
		f.cancel(ctx, r)
	}
}

// pipePair connects a Conn serving agent to raw line I/O for the test.
type pipePair struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	conn *Conn
}

func newPipePair(t *testing.T, a Agent, opts *Options) *pipePair {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	conn := NewConn(t.Context(), func(Client) Agent { return a }, inR, outW, inR, opts)
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	t.Cleanup(func() {
		inW.Close()
		conn.Close()
		outR.Close()
		conn.Wait()
	})
	return &pipePair{t: t, in: inW, out: sc, conn: conn}
}

func (p *pipePair) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

func (p *pipePair) recv() wireMsg {
	p.t.Helper()
	done := make(chan bool, 1)
	go func() { done <- p.out.Scan() }()
	select {
	case ok := <-done:
		if !ok {
			p.t.Fatalf("connection closed: %v", p.out.Err())
		}
	case <-time.After(10 * time.Second):
		p.t.Fatal("no message within 10s")
	}
	var m wireMsg
	if err := json.Unmarshal(p.out.Bytes(), &m); err != nil {
		p.t.Fatalf("agent wrote a non-JSON line %q: %v", p.out.Text(), err)
	}
	return m
}

func TestBadInputGetsAnAnswerAndTheConnectionGoesOn(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		wantID string
		code   int
	}{
		{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":`, "null", CodeParseError},
		{"not JSON at all", `hello`, "null", CodeParseError},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"x\":\"\xff\"}}", "null", CodeParseError},
		{"neither request nor response", `{"jsonrpc":"2.0","id":3}`, "3", CodeInvalidRequest},
		{"method not a string", `{"jsonrpc":"2.0","id":4,"method":42}`, "4", CodeInvalidRequest},
		{"both method and result", `{"jsonrpc":"2.0","id":5,"method":"initialize","result":{}}`, "5", CodeInvalidRequest},
		{"wrong jsonrpc version", `{"jsonrpc":"1.0","id":6,"method":"initialize","params":{"protocolVersion":1}}`, "6", CodeInvalidRequest},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"initialize"}]`, "null", CodeInvalidRequest},
		{"a bare number", `17`, "null", CodeInvalidRequest},
		{"id is an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"initialize","params":{"protocolVersion":1}}`, "null", CodeInvalidRequest},
		{"id is null", `{"jsonrpc":"2.0","id":null,"method":"initialize","params":{"protocolVersion":1}}`, "null", CodeInvalidRequest},
		{"params is a string", `{"jsonrpc":"2.0","id":8,"method":"initialize","params":"x"}`, "8", CodeInvalidRequest},
		{"unknown method", `{"jsonrpc":"2.0","id":9,"method":"no/such"}`, "9", CodeMethodNotFound},
		{"unknown extension method", `{"jsonrpc":"2.0","id":10,"method":"_zed.dev/x","params":{}}`, "10", CodeMethodNotFound},
		{"optional method the agent lacks", `{"jsonrpc":"2.0","id":11,"method":"session/load","params":{"sessionId":"a","cwd":"/","mcpServers":[]}}`, "11", CodeMethodNotFound},
		{"params missing", `{"jsonrpc":"2.0","id":12,"method":"initialize"}`, "12", CodeInvalidParams},
		{"required field missing", `{"jsonrpc":"2.0","id":13,"method":"session/new","params":{"cwd":"/tmp"}}`, "13", CodeInvalidParams},
		{"wrong type", `{"jsonrpc":"2.0","id":14,"method":"initialize","params":{"protocolVersion":"1"}}`, "14", CodeInvalidParams},
		{"params array", `{"jsonrpc":"2.0","id":15,"method":"initialize","params":[1]}`, "15", CodeInvalidParams},
		{"notification sent with an id", `{"jsonrpc":"2.0","id":16,"method":"session/cancel","params":{"sessionId":"s"}}`, "16", CodeInvalidRequest},
		{"prompt block of unknown type", `{"jsonrpc":"2.0","id":17,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"video"}]}}`, "17", CodeInvalidParams},
	}
	p := newPipePair(t, &fakeAgent{}, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.t = t
			p.send(tt.line)
			m := p.recv()
			if m.Error == nil || m.Error.Code != tt.code {
				t.Fatalf("got %+v (error %+v), want code %d", m, m.Error, tt.code)
			}
			if string(m.ID) != tt.wantID {
				t.Errorf("id = %s, want %s", m.ID, tt.wantID)
			}
			// The connection still serves.
			p.send(`{"jsonrpc":"2.0","id":"ok","method":"initialize","params":{"protocolVersion":1}}`)
			if m := p.recv(); string(m.ID) != `"ok"` || m.Error != nil {
				t.Fatalf("after bad input: %+v", m)
			}
		})
	}
}

func TestIgnoredMessages(t *testing.T) {
	p := newPipePair(t, &fakeAgent{}, nil)
	for _, line := range []string{
		``, `   `,
		`{"jsonrpc":"2.0","method":"no/such/notification","params":{}}`,
		`{"jsonrpc":"2.0","method":"_zed.dev/whatever"}`,
		`{"jsonrpc":"2.0","id":99,"result":{}}`,                  // response to a request never sent
		`{"jsonrpc":"2.0","id":-5,"result":{}}`,                  // response with an id we never use
		`{"jsonrpc":"2.0","method":"session/prompt"}`,            // request method sent as a notification
		`{"jsonrpc":"2.0","method":"session/cancel"}`,            // notification with missing params
		`{"method":"session/cancel","params":{"sessionId":"x"}}`, // no jsonrpc: dropped
	} {
		p.send(line)
	}
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	if m := p.recv(); string(m.ID) != "1" || m.Error != nil {
		t.Fatalf("first answer should be to id 1, got %+v", m)
	}
}

func TestIDsAreEchoedExactly(t *testing.T) {
	p := newPipePair(t, &fakeAgent{}, nil)
	for _, id := range []string{`0`, `1`, `"abc"`, `""`, `-1`, `1.5`, `1e3`, `18446744073709551616`, `9007199254740993`, `"\u0000acp-bridge-id:1"`} {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":1}}`)
		m := p.recv()
		if string(m.ID) != id && !(id == `"\u0000acp-bridge-id:1"` && string(m.ID) == `"\u0000acp-bridge-id:1"`) {
			t.Errorf("sent id %s, answer carries %s", id, m.ID)
		}
		if m.Error != nil {
			t.Errorf("id %s: unexpected error %+v", id, m.Error)
		}
	}
	// Duplicate ids are both answered.
	p.send(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}`)
	p.send(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}`)
	for range 2 {
		if m := p.recv(); string(m.ID) != "7" {
			t.Errorf("duplicate id: got %s", m.ID)
		}
	}
}

func TestOversizedLineIsDiscarded(t *testing.T) {
	p := newPipePair(t, &fakeAgent{}, &Options{MaxMessageSize: 1024})
	// Written from a goroutine (the pipe blocks until read); an error shows
	// as a missing answer below, since Fatalf belongs to the test goroutine.
	go io.WriteString(p.in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"pad":"`+strings.Repeat("x", 200_000)+`"}}`+"\n")
	if m := p.recv(); m.Error == nil || m.Error.Code != CodeInvalidRequest {
		t.Fatalf("oversized line: got %+v", m)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}`)
	if m := p.recv(); string(m.ID) != "2" || m.Error != nil {
		t.Fatalf("after oversized line: %+v", m)
	}
}

func TestHandlerPanicIsAnInternalError(t *testing.T) {
	p := newPipePair(t, &fakeAgent{newSession: func(context.Context, *NewSessionRequest) (*NewSessionResponse, error) {
		panic("boom")
	}}, nil)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	if m := p.recv(); m.Error == nil || m.Error.Code != CodeInternalError {
		t.Fatalf("got %+v", m)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}`)
	if m := p.recv(); string(m.ID) != "2" {
		t.Fatalf("after panic: %+v", m)
	}
}

// Requests run concurrently; notifications run inline and in order; a
// $/cancel_request cancels the named request, which answers -32800.
func TestConcurrencyAndCancellation(t *testing.T) {
	var mu sync.Mutex
	var cancels []string
	release := make(chan struct{})
	a := &fakeAgent{
		prompt: func(ctx context.Context, r *PromptRequest) (*PromptResponse, error) {
			if r.SessionID == "block" {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-release:
				}
			}
			return &PromptResponse{StopReason: StopEndTurn}, nil
		},
		cancel: func(_ context.Context, r *CancelNotification) {
			mu.Lock()
			cancels = append(cancels, r.SessionID)
			mu.Unlock()
		},
	}
	p := newPipePair(t, a, nil)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"block","prompt":[{"type":"text","text":"hi"}]}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"free","prompt":[{"type":"text","text":"hi"}]}}`)
	if m := p.recv(); string(m.ID) != "2" {
		t.Fatalf("a blocked request must not hold up another: got %+v", m)
	}
	for _, s := range []string{"a", "b", "c"} {
		p.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + s + `"}}`)
	}
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`)
	m := p.recv()
	if string(m.ID) != "1" || m.Error == nil || m.Error.Code != CodeRequestCancelled {
		t.Fatalf("cancelled request: got %+v", m)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(cancels, ",") != "a,b,c" {
		t.Errorf("notifications out of order: %v", cancels)
	}
	close(release)
}

// Prompts sent one after another take their places in the order they were
// sent, though each runs in its own goroutine; a prompt that never admits
// itself holds the next one until it returns, and unordered methods are
// not held at all.
func TestPromptsAreAdmittedInArrivalOrder(t *testing.T) {
	var mu sync.Mutex
	var order []string
	release := make(chan struct{})
	a := &fakeAgent{
		admitLate: true,
		prompt: func(ctx context.Context, r *PromptRequest) (*PromptResponse, error) {
			if r.SessionID == "holds" {
				<-release // returns without admitting itself
				return &PromptResponse{StopReason: StopEndTurn}, nil
			}
			mu.Lock()
			order = append(order, r.SessionID)
			mu.Unlock()
			Admitted(ctx)
			return &PromptResponse{StopReason: StopEndTurn}, nil
		},
	}
	p := newPipePair(t, a, nil)
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // before the pipe's cleanup
	const n = 50
	var want []string
	for i := range n {
		sid := fmt.Sprint(i)
		want = append(want, sid)
		p.send(`{"jsonrpc":"2.0","id":` + sid + `,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[]}}`)
	}
	for range n {
		p.recv()
	}
	p.send(`{"jsonrpc":"2.0","id":100,"method":"session/prompt","params":{"sessionId":"holds","prompt":[]}}`)
	p.send(`{"jsonrpc":"2.0","id":101,"method":"session/prompt","params":{"sessionId":"after","prompt":[]}}`)
	p.send(`{"jsonrpc":"2.0","id":102,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	if m := p.recv(); string(m.ID) != "102" {
		t.Fatalf("want session/new answered first (a prompt behind an unadmitted one waits, session/new does not); got %+v", m)
	}
	once.Do(func() { close(release) })
	got := map[string]bool{}
	for range 2 {
		got[string(p.recv().ID)] = true
	}
	if !got["100"] || !got["101"] {
		t.Fatalf("answers after the held prompt returned: %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(append(want, "after"), order); diff != "" {
		t.Errorf("prompts took their places out of arrival order (-want +got):\n%s", diff)
	}
}

func TestClientCallsAndCancelRequest(t *testing.T) {
	var conn *Conn
	a := &fakeAgent{prompt: func(ctx context.Context, r *PromptRequest) (*PromptResponse, error) {
		resp, err := conn.RequestPermission(ctx, &RequestPermissionRequest{SessionID: r.SessionID,
			ToolCall: ToolCallUpdate{ToolCallID: "c1"}, Options: []PermissionOption{{OptionID: "a", Name: "Allow", Kind: AllowOnce}}})
		if err != nil {
			return nil, err
		}
		if resp.Outcome.OptionID != "a" {
			return &PromptResponse{StopReason: StopRefusal}, nil
		}
		return &PromptResponse{StopReason: StopEndTurn}, nil
	}}
	p := newPipePair(t, a, nil)
	conn = p.conn
	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}`)
	req := p.recv()
	if req.Method != MethodSessionRequestPermission {
		t.Fatalf("want a permission request, got %+v", req)
	}
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"outcome":{"outcome":"selected","optionId":"a"}}}`)
	if m := p.recv(); string(m.Result) != `{"stopReason":"end_turn"}` {
		t.Fatalf("got %+v", m)
	}
}
