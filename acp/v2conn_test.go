package acp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestVersionNegotiation: the first initialize decides the dialect, 2
// exactly gets v2 (its shape, experimental in _meta), anything else gets
// v1 as before; a v2 connection serves v2's method set only and refuses a
// repeated initialize for less than 2.
func TestVersionNegotiation(t *testing.T) {
	v1only := []string{MethodSessionLoad, MethodAuthenticate, MethodSessionSetMode, MethodLogout}
	tests := []struct {
		name    string
		init    string
		wantV2  bool
		wantVer float64
	}{
		{"v1", `{"protocolVersion":1}`, false, 1},
		{"v2", `{"protocolVersion":2,"info":{"name":"t","version":"1"}}`, true, 2},
		{"future version stays v1", `{"protocolVersion":999}`, false, 1},
		{"zero stays v1", `{"protocolVersion":0}`, false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seen *InitializeRequest
			a := &fakeAgent{initialize: func(_ context.Context, r *InitializeRequest) (*InitializeResponse, error) {
				seen = r
				return &InitializeResponse{ProtocolVersion: 1, AgentInfo: &Implementation{Name: "a", Version: "1"},
					AuthMethods: []AuthMethod{}, AgentCapabilities: AgentCapabilities{
						SessionCapabilities: SessionCapabilities{List: &Empty{}, Resume: &Empty{}, Close: &Empty{}}}}, nil
			}}
			p := newPipePair(t, a, nil)
			p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + tc.init + `}`)
			m := p.recv()
			var r map[string]any
			if m.Error != nil || json.Unmarshal(m.Result, &r) != nil {
				t.Fatalf("initialize: %+v", m)
			}
			if r["protocolVersion"] != tc.wantVer {
				t.Errorf("protocolVersion = %v, want %v", r["protocolVersion"], tc.wantVer)
			}
			if p.conn.V2() != tc.wantV2 {
				t.Errorf("V2() = %v", p.conn.V2())
			}
			meta, _ := r["_meta"].(map[string]any)
			_, experimental := meta[MetaExperimental]
			_, hasInfo := r["info"]
			if experimental != tc.wantV2 || hasInfo != tc.wantV2 {
				t.Errorf("experimental %v, info %v in %v", experimental, hasInfo, r)
			}
			if tc.wantV2 {
				if seen.ProtocolVersion != 2 || seen.ClientCapabilities.FS.ReadTextFile || seen.ClientCapabilities.Terminal {
					t.Errorf("the agent saw %+v", seen)
				}
				for _, meth := range v1only {
					p.send(`{"jsonrpc":"2.0","id":10,"method":"` + meth + `","params":{}}`)
					if m := p.recv(); m.Error == nil || m.Error.Code != CodeMethodNotFound {
						t.Errorf("%s on v2: %+v", meth, m)
					}
				}
				p.send(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":1}}`)
				if m := p.recv(); m.Error == nil || m.Error.Code != CodeInvalidRequest {
					t.Errorf("initialize for v1 on a v2 connection: %+v", m)
				}
			}
		})
	}
}

// TestV2PromptAnswersAtOnce: v2's session/prompt answers with the user
// message's id once the prompt has its place (Accepted), while the turn
// runs on; an error before that is the answer.
func TestV2PromptAnswersAtOnce(t *testing.T) {
	release := make(chan struct{})
	got := make(chan *PromptRequest, 2)
	a := &fakeAgent{admitLate: true, prompt: func(ctx context.Context, r *PromptRequest) (*PromptResponse, error) {
		if r.SessionID == "bad" {
			return nil, InvalidParams("no such session") // before its place
		}
		Admitted(ctx)
		Accepted(ctx)
		got <- r
		<-release // the turn runs on after the answer
		return &PromptResponse{StopReason: StopEndTurn}, nil
	}}
	p := newPipePair(t, a, nil)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"t","version":"1"}}}`)
	p.recv()
	p.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`)
	m := p.recv()
	var r V2PromptResponse
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil || r.MessageID == "" {
		t.Fatalf("prompt: %+v", m)
	}
	if req := <-got; req.MessageID != r.MessageID {
		t.Errorf("the agent got message id %q, the client %q", req.MessageID, r.MessageID)
	}
	close(release)
	p.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"bad","prompt":[{"type":"text","text":"hi"}]}}`)
	if m := p.recv(); m.Error == nil || m.Error.Code != CodeInvalidParams {
		t.Errorf("a prompt refused before its place: %+v", m)
	}
	p.send(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
	if m := p.recv(); m.Error == nil || m.Error.Code != CodeInvalidParams {
		t.Errorf("an empty prompt: %+v", m)
	}
}

func TestParseReplayFrom(t *testing.T) {
	one, seven := int64(1), int64(7)
	tests := []struct {
		in   string
		want *int64
		code int
	}{
		{``, nil, 0},
		{`null`, nil, 0},
		{`{"type":"start"}`, &one, 0},
		{`{"type":"_seq","seq":7}`, &seven, 0},
		{`{"type":"_seq","seq":0}`, nil, CodeInvalidParams},
		{`{"type":"_seq"}`, nil, CodeInvalidParams},
		{`{"type":"messageId","id":"x"}`, nil, CodeInvalidParams},
		{`"start"`, nil, CodeInvalidParams},
	}
	for _, tc := range tests {
		got, err := ParseReplayFrom(json.RawMessage(tc.in))
		code := 0
		if e, ok := err.(*Error); ok {
			code = e.Code
		}
		if code != tc.code || cmp.Diff(tc.want, got) != "" {
			t.Errorf("ParseReplayFrom(%s) = %v, %v; want %v, code %d", tc.in, got, err, tc.want, tc.code)
		}
	}
}
