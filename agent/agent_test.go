package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

// editor is an in-memory ACP client connected to an Agent over pipes.
type editor struct {
	t    *testing.T
	rpc  *jsonrpc2.Conn
	mu   sync.Mutex
	upds []acp.Update
	sids []string // the session of each update
	// permission answers session/request_permission; nil selects "allow-once".
	permission func(*acp.RequestPermissionRequest) acp.RequestPermissionResponse
	// elicit answers elicitation/create; nil: the method is not found.
	elicit func(*acp.CreateElicitationRequest) acp.CreateElicitationResponse
}

func newEditor(t *testing.T, o Options) *editor {
	t.Helper()
	e, _ := newEditorAgent(t, o)
	return e
}

// newEditorAgent is newEditor that also hands back the agent, to look at a
// session's tools and state.
func newEditorAgent(t *testing.T, o Options) (*editor, *Agent) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var ag *Agent
	conn := acp.NewConn(t.Context(), func(c acp.Client) acp.Agent { ag = New(c, o); return ag }, inR, outW, inR, nil)
	e := &editor{t: t}
	e.rpc = jsonrpc2.NewConn(t.Context(), jsonrpc2.NewPlainObjectStream(rwc{outR, inW}), e)
	t.Cleanup(func() {
		e.rpc.Close()
		inW.Close()
		ag.Shutdown()
		conn.Close()
		conn.Wait()
		outW.Close() // ends the editor's read loop
	})
	return e, ag
}

type rwc struct {
	io.Reader
	io.WriteCloser
}

func (e *editor) Handle(ctx context.Context, c *jsonrpc2.Conn, req *jsonrpc2.Request) {
	switch req.Method {
	case acp.MethodSessionUpdate:
		var n acp.SessionNotification
		if err := json.Unmarshal(*req.Params, &n); err != nil {
			e.t.Errorf("bad session/update: %v", err)
			return
		}
		e.mu.Lock()
		e.upds = append(e.upds, n.Update)
		e.sids = append(e.sids, n.SessionID)
		e.mu.Unlock()
	case acp.MethodSessionRequestPermission:
		var r acp.RequestPermissionRequest
		_ = json.Unmarshal(*req.Params, &r)
		resp := acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: "allow-once"}}
		if e.permission != nil {
			resp = e.permission(&r)
		}
		_ = c.Reply(ctx, req.ID, resp)
	case acp.MethodElicitationCreate:
		var r acp.CreateElicitationRequest
		_ = json.Unmarshal(*req.Params, &r)
		if e.elicit == nil {
			_ = c.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: acp.CodeMethodNotFound, Message: "no"})
			return
		}
		_ = c.Reply(ctx, req.ID, e.elicit(&r))
	default:
		if !req.Notif {
			_ = c.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: acp.CodeMethodNotFound, Message: "no"})
		}
	}
}

func (e *editor) call(method string, params, result any) error {
	return e.rpc.Call(e.t.Context(), method, params, result)
}

func (e *editor) updates() []acp.Update {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]acp.Update(nil), e.upds...)
}

// waitForMessage waits until an agent_message_chunk arrived: a turn is under way.
func (e *editor) waitForMessage() {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(e.turnUpdates()) == 0 {
		if time.Now().After(deadline) {
			e.t.Fatal("no agent message after 10s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// turnUpdates returns the updates about the conversation itself, leaving out
// session bookkeeping (commands, title, usage, modes).
func (e *editor) turnUpdates() []acp.Update {
	var out []acp.Update
	for _, u := range e.updates() {
		switch u.(type) {
		case *acp.AvailableCommandsUpdate, *acp.SessionInfoUpdate, *acp.UsageUpdate, *acp.CurrentModeUpdate, *acp.ConfigOptionUpdate:
			continue
		}
		out = append(out, u)
	}
	return out
}

func (e *editor) newSession(cwd string) string {
	e.t.Helper()
	if err := e.call(acp.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, &acp.InitializeResponse{}); err != nil {
		e.t.Fatal(err)
	}
	var s acp.NewSessionResponse
	if err := e.call(acp.MethodSessionNew, acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}}, &s); err != nil {
		e.t.Fatal(err)
	}
	return s.SessionID
}

func (e *editor) prompt(sid, text string) (acp.StopReason, error) {
	var r acp.PromptResponse
	err := e.call(acp.MethodSessionPrompt, acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}}, &r)
	return r.StopReason, err
}

func script(t *testing.T, js string) *model.Script {
	t.Helper()
	s, err := model.ParseScript([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rpcCode(err error) int {
	var e *jsonrpc2.Error
	if errors.As(err, &e) {
		return int(e.Code)
	}
	return 0
}

func TestInitializeNegotiatesVersion1(t *testing.T) {
	e := newEditor(t, Options{Version: "1.2.3"})
	for _, asked := range []int{1, 2, 0, 999} {
		var r acp.InitializeResponse
		if err := e.call(acp.MethodInitialize, acp.InitializeRequest{ProtocolVersion: asked}, &r); err != nil {
			t.Fatal(err)
		}
		if r.ProtocolVersion != 1 {
			t.Errorf("asked %d, answered %d; want 1", asked, r.ProtocolVersion)
		}
		if r.AgentInfo == nil || r.AgentInfo.Name != "acp-bridge" || r.AgentInfo.Version != "1.2.3" {
			t.Errorf("agentInfo = %+v", r.AgentInfo)
		}
		if r.AgentCapabilities.LoadSession {
			t.Errorf("advertises what does not work yet: %+v", r.AgentCapabilities)
		}
	}
}

func TestSessionNewAndPromptErrors(t *testing.T) {
	e := newEditor(t, Options{})
	tests := []struct {
		name   string
		method string
		params any
		code   int
	}{
		{"relative cwd", acp.MethodSessionNew, map[string]any{"cwd": "rel/dir", "mcpServers": []any{}}, acp.CodeInvalidParams},
		{"empty cwd", acp.MethodSessionNew, map[string]any{"cwd": "", "mcpServers": []any{}}, acp.CodeInvalidParams},
		{"relative additional dir", acp.MethodSessionNew, map[string]any{"cwd": "/tmp", "mcpServers": []any{}, "additionalDirectories": []string{"x"}}, acp.CodeInvalidParams},
		{"mcp server without a name", acp.MethodSessionNew, map[string]any{"cwd": "/tmp", "mcpServers": []any{map[string]any{"command": "/bin/x", "args": []string{}, "env": []any{}}}}, acp.CodeInvalidParams},
		{"unknown session", acp.MethodSessionPrompt, acp.PromptRequest{SessionID: "nope", Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}, acp.CodeResourceNotFound},
		{"close unknown session", acp.MethodSessionClose, acp.CloseSessionRequest{SessionID: "nope"}, acp.CodeResourceNotFound},
		{"unknown auth method", acp.MethodAuthenticate, acp.AuthenticateRequest{MethodID: "x"}, acp.CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := e.call(tt.method, tt.params, &json.RawMessage{})
			if rpcCode(err) != tt.code {
				t.Fatalf("err = %v, want code %d", err, tt.code)
			}
		})
	}
	sid := e.newSession(t.TempDir())
	for _, p := range [][]acp.ContentBlock{
		{acp.TextBlock("   ")},
		{{Type: "audio", Data: "aGk=", MimeType: "audio/wav"}},
	} {
		err := e.call(acp.MethodSessionPrompt, acp.PromptRequest{SessionID: sid, Prompt: p}, &json.RawMessage{})
		if rpcCode(err) != acp.CodeInvalidParams {
			t.Errorf("prompt %+v: err = %v, want invalid params", p, err)
		}
	}
}

func TestNoModelTellsHowToConfigureOne(t *testing.T) {
	e := newEditor(t, Options{ModelHint: "set ACP_BRIDGE_MODEL"})
	sid := e.newSession(t.TempDir())
	stop, err := e.prompt(sid, "hello")
	if err != nil || stop != acp.StopEndTurn {
		t.Fatalf("stop=%q err=%v", stop, err)
	}
	ups := e.turnUpdates()
	if len(ups) != 1 {
		t.Fatalf("updates: %+v", ups)
	}
	msg, ok := ups[0].(*acp.AgentMessageChunk)
	if !ok || !strings.Contains(msg.Content.Text, "No model is configured") || !strings.Contains(msg.Content.Text, "--model script:FILE") {
		t.Fatalf("got %+v", ups[0])
	}
}

func TestPromptWithReadTool(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	fs.Register(reg)
	e := newEditor(t, Options{Registry: reg, Model: script(t, `{"responses":[
		{"parts":[{"thought":"look"},{"text":"Reading."},{"tool_call":{"id":"c1","name":"read","arguments":{"file_path":"main.go"}}}]},
		{"parts":[{"text":"It is empty."}]}]}`)})
	sid := e.newSession(dir)
	stop, err := e.prompt(sid, "what is in main.go?")
	if err != nil || stop != acp.StopEndTurn {
		t.Fatalf("stop=%q err=%v", stop, err)
	}
	var kinds []string
	var call *acp.ToolCall
	var final *acp.ToolCallUpdate
	for _, u := range e.turnUpdates() {
		kinds = append(kinds, u.UpdateKind())
		switch u := u.(type) {
		case *acp.ToolCall:
			call = u
		case *acp.ToolCallUpdate:
			if u.Status != nil && *u.Status == acp.StatusCompleted {
				final = u
			}
		}
	}
	want := "agent_thought_chunk,agent_message_chunk,tool_call,tool_call_update,tool_call_update,agent_message_chunk,agent_message_chunk,agent_message_chunk"
	if strings.Join(kinds, ",") != want {
		t.Errorf("updates:\n got %s\nwant %s", strings.Join(kinds, ","), want)
	}
	if call == nil || call.Kind != acp.KindRead || call.Title != "Read main.go" || len(call.Locations) != 1 ||
		call.Locations[0].Path != filepath.Join(dir, "main.go") || call.Locations[0].Line == nil || *call.Locations[0].Line != 1 {
		t.Fatalf("tool_call = %+v", call)
	}
	if final == nil || len(final.Content) != 1 || !strings.Contains(final.Content[0].Content.Text, "1: package main") {
		t.Fatalf("final update = %+v", final)
	}
}

func TestToolFailuresAreFailedCardsNotErrors(t *testing.T) {
	reg := registry.New()
	fs.Register(reg)
	e := newEditor(t, Options{Registry: reg, Model: script(t, `{"responses":[
		{"parts":[{"tool_call":{"id":"a","name":"read","arguments":{"file_path":"nope.txt"}}},
		          {"tool_call":{"id":"b","name":"no_such_tool","arguments":{}}},
		          {"tool_call":{"id":"c","name":"read","arguments":{"offset":"x"}}}]},
		{"parts":[{"text":"done"}]}]}`)})
	sid := e.newSession(t.TempDir())
	if stop, err := e.prompt(sid, "go"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("stop=%q err=%v", stop, err)
	}
	failed := map[string]string{}
	for _, u := range e.updates() {
		if u, ok := u.(*acp.ToolCallUpdate); ok && u.Status != nil && *u.Status == acp.StatusFailed {
			failed[u.ToolCallID] = u.Content[0].Content.Text
		}
	}
	for id, want := range map[string]string{"a": "file not found", "b": `unknown tool "no_such_tool"`, "c": "invalid arguments"} {
		if !strings.Contains(failed[id], want) {
			t.Errorf("call %s: failed text %q, want it to contain %q", id, failed[id], want)
		}
	}
}

func TestStopReasons(t *testing.T) {
	loop := `{"parts":[{"tool_call":{"name":"read","arguments":{"file_path":"x"}}}]}`
	tests := []struct {
		name   string
		script string
		max    int
		want   acp.StopReason
		code   int // a JSON-RPC error instead of a stop reason
	}{
		{"end turn", `{"responses":[{"parts":[{"text":"hi"}]}]}`, 0, acp.StopEndTurn, 0},
		{"length", `{"responses":[{"parts":[{"text":"hi"}],"finish":"length"}]}`, 0, acp.StopMaxTokens, 0},
		{"content filter", `{"responses":[{"parts":[{"text":"no"}],"finish":"content_filter"}]}`, 0, acp.StopRefusal, 0},
		{"too many requests", `{"responses":[` + loop + `,` + loop + `,` + loop + `]}`, 2, acp.StopMaxTurnRequests, 0},
		{"model fails mid-stream", `{"responses":[{"parts":[{"text":"par"},{"error":"connection reset"}]}]}`, 0, "", acp.CodeInternalError},
		{"script exhausted", `{"responses":[]}`, 0, "", acp.CodeInternalError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := registry.New()
			fs.Register(reg)
			e := newEditor(t, Options{Registry: reg, Model: script(t, tt.script), MaxTurnRequests: tt.max})
			sid := e.newSession(t.TempDir())
			stop, err := e.prompt(sid, "go")
			if rpcCode(err) != tt.code || stop != tt.want {
				t.Fatalf("stop=%q err=%v, want %q (code %d)", stop, err, tt.want, tt.code)
			}
			if tt.want == acp.StopMaxTurnRequests && !strings.Contains(agentTextOf(e.turnUpdates()), "limit of 2 model requests (max_turn_requests)") {
				t.Errorf("hitting max_turn_requests is not said: %q", agentTextOf(e.turnUpdates()))
			}
		})
	}
}

func agentTextOf(ups []acp.Update) string {
	var b strings.Builder
	for _, u := range ups {
		if m, ok := u.(*acp.AgentMessageChunk); ok {
			b.WriteString(m.Content.Text)
		}
	}
	return b.String()
}

// A failed model request fails session/prompt with a JSON-RPC error (an
// editor shows it as an error); what streamed before stays, and the failure
// is not also sent as text. A missing or refused key is -32000, naming the
// settings to change.
func TestModelFailureIsAnError(t *testing.T) {
	noKey, err := model.NewOpenAI(model.OpenAIOptions{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKeyEnv: "SOME_KEY", RequireKey: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		provider model.Provider
		code     int
		want     []string // in the error message
		streamed string
	}{
		{"failed request", script(t, `{"responses":[{"parts":[{"text":"par"},{"error":"connection reset"}]}]}`), acp.CodeInternalError,
			[]string{"The model request failed", "connection reset"}, "par"},
		{"missing key", noKey, acp.CodeAuthRequired,
			[]string{"needs an API key: SOME_KEY is not set", "your editor's settings for this agent", "acp-bridge login"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEditor(t, Options{Model: tt.provider})
			sid := e.newSession(t.TempDir())
			_, err := e.prompt(sid, "go")
			var re *jsonrpc2.Error
			if !errors.As(err, &re) || int(re.Code) != tt.code {
				t.Fatalf("err = %v, want code %d", err, tt.code)
			}
			for _, w := range tt.want {
				if !strings.Contains(re.Message, w) {
					t.Errorf("message lacks %q: %s", w, re.Message)
				}
			}
			if strings.Contains(re.Message, "restart acp-bridge") {
				t.Errorf("advice a Zed user cannot follow: %s", re.Message)
			}
			if got := agentTextOf(e.turnUpdates()); got != tt.streamed {
				t.Errorf("agent text %q, want only what streamed (%q)", got, tt.streamed)
			}
		})
	}
}

// The key advice names the settings of the editor the user is in (from
// clientInfo), and none of another editor's; an editor it does not know
// gets neutral advice.
func TestKeyAdviceNamesTheEditor(t *testing.T) {
	tests := []struct {
		info      *acp.Implementation
		want      string
		notWanted []string
	}{
		{&acp.Implementation{Name: "zed", Version: "0.300.0"}, `"agent_servers" in settings.json`, []string{"CodeCompanion", "agent-shell"}},
		{&acp.Implementation{Name: "JetBrains AI Assistant"}, "~/.jetbrains/acp.json", []string{"Zed", "settings.json"}},
		{&acp.Implementation{Name: "CodeCompanion.nvim", Version: "17.0.0"}, "acp_bridge adapter", []string{"Zed", "agent_servers"}},
		{&acp.Implementation{Name: "agent-shell", Version: "0.74"}, ":environment-variables", []string{"Zed", "agent_servers"}},
		{&acp.Implementation{Name: "acp.el"}, ":environment-variables", []string{"Zed", "agent_servers"}},
		{&acp.Implementation{Name: "my-app"}, "your editor's settings for this agent", []string{"Zed", "agent_servers", "CodeCompanion"}},
		{nil, "your editor's settings for this agent", []string{"Zed", "agent_servers"}},
	}
	for _, tt := range tests {
		got := keyAdvice("DEEPSEEK_API_KEY", editorOf(tt.info))
		if !strings.Contains(got, tt.want) || !strings.Contains(got, "Set DEEPSEEK_API_KEY") || !strings.Contains(got, "acp-bridge login") {
			t.Errorf("%+v: advice %q, want %q in it", tt.info, got, tt.want)
		}
		for _, w := range tt.notWanted {
			if strings.Contains(got, w) {
				t.Errorf("%+v: advice names %q, another editor's: %s", tt.info, w, got)
			}
		}
	}
}

func TestCancelAndConcurrentPrompt(t *testing.T) {
	e, ag := newEditorAgent(t, Options{Model: script(t, `{"responses":[
		{"parts":[{"text":"slow"},{"delay_ms":30000},{"text":"never"}]},
		{"parts":[{"text":"again"}]}]}`)})
	sid := e.newSession(t.TempDir())
	res := make(chan acp.StopReason, 1)
	go func() {
		stop, err := e.prompt(sid, "first")
		if err != nil {
			t.Error(err)
		}
		res <- stop
	}()
	e.waitForMessage() // the turn is under way
	// A second prompt waits behind it; the cancel stops both (the user
	// stopped what the agent was doing).
	second := make(chan acp.StopReason, 1)
	go func() {
		stop, err := e.prompt(sid, "second")
		if err != nil {
			t.Error(err)
		}
		second <- stop
	}()
	s := ag.liveSession(t, sid)
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.queued) == 1 })
	if err := e.rpc.Notify(t.Context(), acp.MethodSessionCancel, acp.CancelNotification{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []chan acp.StopReason{res, second} {
		select {
		case stop := <-ch:
			if stop != acp.StopCancelled {
				t.Fatalf("stop = %q, want cancelled", stop)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("cancelled prompt did not answer")
		}
	}
	// The session serves the next prompt.
	if stop, err := e.prompt(sid, "third"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("after cancel: stop=%q err=%v", stop, err)
	}
}

// A prompt that arrives while a turn runs is queued, not refused: it runs
// when that turn ends and is answered when its own turn does, in order.
func TestPromptWhileRunningIsQueued(t *testing.T) {
	gate := make(chan struct{})
	p := &gatedProvider{gate: gate}
	e, ag := newEditorAgent(t, Options{Model: p})
	sid := e.newSession(t.TempDir())
	answers := make(chan string, 3)
	ask := func(text string) {
		stop, err := e.prompt(sid, text)
		if err != nil {
			t.Error(err)
		}
		answers <- text + ":" + string(stop)
	}
	go ask("first")
	s := ag.liveSession(t, sid)
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.running })
	go ask("second")
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.queued) == 1 })
	go ask("third")
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.queued) == 2 })
	close(gate)
	var got []string
	for range 3 {
		select {
		case a := <-answers:
			got = append(got, a)
		case <-time.After(10 * time.Second):
			t.Fatalf("answers so far %v", got)
		}
	}
	// Each answer reaches this test through a goroutine of its own, so
	// their arrival order here is the scheduler's: the run order is what
	// the model was asked, checked below.
	slices.Sort(got)
	if want := []string{"first:end_turn", "second:end_turn", "third:end_turn"}; !slices.Equal(got, want) {
		t.Errorf("answers %v, want %v", got, want)
	}
	if want := []string{"first", "second", "third"}; !slices.Equal(p.prompts(), want) {
		t.Errorf("the model was asked %v, want %v", p.prompts(), want)
	}
}

// gatedProvider answers every request with "ok" once gate is closed, and
// keeps the last user message of each request.
type gatedProvider struct {
	gate <-chan struct{}
	mu   sync.Mutex
	seen []string
}

func (p *gatedProvider) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	p.mu.Lock()
	p.seen = append(p.seen, req.Messages[len(req.Messages)-1].Content)
	p.mu.Unlock()
	return func(yield func(model.Event, error) bool) {
		select {
		case <-p.gate:
		case <-ctx.Done():
			yield(model.Event{}, ctx.Err())
			return
		}
		if yield(model.Event{Kind: model.EventText, Text: "ok"}, nil) {
			yield(model.Event{Kind: model.EventFinish, Finish: model.FinishStop}, nil)
		}
	}
}

func (p *gatedProvider) prompts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

// waitFor polls cond (state, not time: it fails only if cond never holds).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(time.Millisecond)
	}
}

// A cancel for an unknown session, or when nothing runs, is harmless.
func TestCancelIdle(t *testing.T) {
	e := newEditor(t, Options{Model: script(t, `{"responses":[{"parts":[{"text":"ok"}]}]}`)})
	sid := e.newSession(t.TempDir())
	for _, id := range []string{sid, "unknown"} {
		if err := e.rpc.Notify(t.Context(), acp.MethodSessionCancel, acp.CancelNotification{SessionID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if stop, err := e.prompt(sid, "hi"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("stop=%q err=%v", stop, err)
	}
}

func TestCloseSession(t *testing.T) {
	e := newEditor(t, Options{Model: script(t, `{"responses":[{"parts":[{"text":"x"},{"delay_ms":30000}]}]}`)})
	sid := e.newSession(t.TempDir())
	res := make(chan acp.StopReason, 1)
	go func() { stop, _ := e.prompt(sid, "first"); res <- stop }()
	e.waitForMessage()
	if err := e.call(acp.MethodSessionClose, acp.CloseSessionRequest{SessionID: sid}, &json.RawMessage{}); err != nil {
		t.Fatal(err)
	}
	if stop := <-res; stop != acp.StopCancelled {
		t.Errorf("prompt of a closed session: %q", stop)
	}
	if _, err := e.prompt(sid, "again"); rpcCode(err) != acp.CodeResourceNotFound {
		t.Errorf("prompt after close: %v", err)
	}
}

// A model that writes broken JSON arguments gets a failed call, and the
// session goes on.
func TestBrokenToolArguments(t *testing.T) {
	reg := registry.New()
	fs.Register(reg)
	e2 := newEditor(t, Options{Registry: reg, Model: brokenArgs{}})
	sid := e2.newSession(t.TempDir())
	if stop, err := e2.prompt(sid, "go"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("stop=%q err=%v", stop, err)
	}
	var failed string
	for _, u := range e2.updates() {
		if u, ok := u.(*acp.ToolCallUpdate); ok && u.Status != nil && *u.Status == acp.StatusFailed {
			failed = u.Content[0].Content.Text
		}
	}
	if !strings.Contains(failed, "invalid arguments") {
		t.Errorf("failed card text %q", failed)
	}
}

// brokenArgs calls read with arguments that are not JSON, then answers.
type brokenArgs struct{}

func (brokenArgs) Stream(_ context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		if req.Messages[len(req.Messages)-1].Role == model.RoleTool {
			yield(model.Event{Kind: model.EventText, Text: "sorry"}, nil)
			yield(model.Event{Kind: model.EventFinish, Finish: model.FinishStop}, nil)
			return
		}
		yield(model.Event{Kind: model.EventToolCall, ToolCall: &model.ToolCall{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"file_path": "x"`)}}, nil)
		yield(model.Event{Kind: model.EventFinish, Finish: model.FinishToolCalls}, nil)
	}
}

// A turn cancelled while the model is still streaming keeps the text the
// user saw in the model's context, but not tool calls that never ran: the
// next request must not carry calls without results.
func TestCancelMidStreamDropsUnrunCalls(t *testing.T) {
	rec := &recorder{p: script(t, `{"responses":[
		{"chunk_size":100,"parts":[{"text":"Let me check."},{"tool_call":{"id":"never","name":"read","arguments":{"file_path":"x"}}},{"delay_ms":30000}]},
		{"parts":[{"text":"ok"}]}]}`)}
	reg := registry.New()
	fs.Register(reg)
	e := newEditor(t, Options{Registry: reg, Model: rec})
	sid := e.newSession(t.TempDir())
	res := make(chan acp.StopReason, 1)
	go func() { stop, _ := e.prompt(sid, "first"); res <- stop }()
	e.waitForMessage()
	if err := e.rpc.Notify(t.Context(), acp.MethodSessionCancel, acp.CancelNotification{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	if stop := <-res; stop != acp.StopCancelled {
		t.Fatalf("stop %q", stop)
	}
	if stop, err := e.prompt(sid, "second"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("second turn: %q %v", stop, err)
	}
	second := rec.last()
	for _, m := range second {
		if len(m.ToolCalls) > 0 {
			t.Errorf("the next request carries calls that never ran: %+v", m)
		}
	}
	var sawText bool
	for _, m := range second {
		if m.Role == model.RoleAssistant && strings.Contains(m.Content, "Let me check.") {
			sawText = true
		}
	}
	if !sawText {
		t.Errorf("the text the user saw is not in the next request: %+v", second)
	}
}
