package agent

import (
	"context"
	"encoding/json"
	"iter"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

// gatedModel answers each request with the next of its responses, but
// only once the test lets it: each Stream reports its request on reqs and
// waits on release. A test so decides exactly what happens while the
// model "thinks", without timing.
type gatedModel struct {
	responses []model.Message
	reqs      chan *model.Request
	release   chan struct{}
	n         int
}

func newGatedModel(responses ...model.Message) *gatedModel {
	return &gatedModel{responses: responses, reqs: make(chan *model.Request, 16), release: make(chan struct{}, 16)}
}

func (g *gatedModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		g.reqs <- req
		select {
		case <-g.release:
		case <-ctx.Done():
			yield(model.Event{}, ctx.Err())
			return
		}
		msg := g.responses[min(g.n, len(g.responses)-1)]
		g.n++
		if msg.Content != "" && !yield(model.Event{Kind: model.EventText, Text: msg.Content}, nil) {
			return
		}
		for i := range msg.ToolCalls {
			if !yield(model.Event{Kind: model.EventToolCall, ToolCall: &msg.ToolCalls[i]}, nil) {
				return
			}
		}
		finish := model.FinishStop
		if len(msg.ToolCalls) > 0 {
			finish = model.FinishToolCalls
		}
		yield(model.Event{Kind: model.EventFinish, Finish: finish}, nil)
	}
}

// next waits for the model's next request.
func (g *gatedModel) next(t *testing.T) *model.Request {
	t.Helper()
	select {
	case r := <-g.reqs:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("no model request after 20s")
		return nil
	}
}

func (e *editor) steer(sid, text string) acp.SteeringResponse {
	e.t.Helper()
	var r acp.SteeringResponse
	if err := e.call(acp.MethodSessionSteering, acp.SteeringRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)},
		Meta: acp.Meta{"steering": map[string]any{"idleBehavior": "promptRequired"}}}, &r); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// roles is a request's messages as "role:content" lines (tool calls by name).
func roles(req *model.Request) []string {
	var out []string
	for _, m := range req.Messages[1:] {
		s := m.Role + ":" + m.Content
		for _, c := range m.ToolCalls {
			s += "[" + c.Name + "]"
		}
		out = append(out, s)
	}
	return out
}

func readCall(id, path string) model.Message {
	args, _ := json.Marshal(map[string]string{"path": path})
	return model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Name: "read", Arguments: args}}}
}

// A message steered while the model works joins the turn at its next
// request, after the results of the calls in flight; one steered while the
// model writes its final answer keeps the turn going for one more request;
// with no turn running the answer is promptRequired. The log holds each as
// user input in the order the model read it.
func TestSteeringJoinsTheRunningTurn(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.txt")
	os.WriteFile(file, []byte("alpha\n"), 0o644)
	reg := registry.New()
	fs.Register(reg)
	g := newGatedModel(readCall("c1", file),
		model.Message{Role: model.RoleAssistant, Content: "first answer"},
		model.Message{Role: model.RoleAssistant, Content: "second answer"})
	e, ag := newEditorAgent(t, Options{Model: g, Registry: reg})
	var init acp.InitializeResponse
	if err := e.call(acp.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, &init); err != nil {
		t.Fatal(err)
	}
	if st, _ := init.Meta["steering"].(map[string]any); st["supported"] != true {
		t.Fatalf("initialize _meta = %v, want steering.supported", init.Meta)
	}
	sid := e.newSession(dir)

	idle := acp.SteeringResponse{Outcome: acp.SteeringPromptRequired, Reason: acp.SteeringNoRunningTurn}
	if got := e.steer(sid, "too early"); got != idle {
		t.Errorf("steering before any turn = %+v, want %+v", got, idle)
	}

	res := make(chan acp.StopReason, 1)
	go func() {
		stop, err := e.prompt(sid, "read it")
		if err != nil {
			t.Error(err)
		}
		res <- stop
	}()
	g.next(t) // the first request is out: the model "thinks"
	if got := e.steer(sid, "use upper case"); got.Outcome != acp.SteeringInjected {
		t.Fatalf("steering during the turn = %+v", got)
	}
	g.release <- struct{}{} // it asks for read
	second := g.next(t)
	want := []string{"user:read it", "assistant:[read]", "tool:" + toolText(t, second, "c1"), "user:use upper case"}
	if d := cmp.Diff(want, roles(second)); d != "" {
		t.Errorf("the request after the call (-want +got):\n%s", d)
	}
	// Steered while the model writes what would be its last answer.
	if got := e.steer(sid, "and count the letters"); got.Outcome != acp.SteeringInjected {
		t.Fatalf("steering during the answer = %+v", got)
	}
	g.release <- struct{}{}
	third := g.next(t)
	want = append(want, "assistant:first answer", "user:and count the letters")
	if d := cmp.Diff(want, roles(third)); d != "" {
		t.Errorf("the request after the steered answer (-want +got):\n%s", d)
	}
	g.release <- struct{}{}
	if stop := <-res; stop != acp.StopEndTurn {
		t.Errorf("stop = %q, want end_turn: one turn, one stop reason", stop)
	}
	if got := e.steer(sid, "too late"); got != idle {
		t.Errorf("steering after the turn = %+v, want %+v", got, idle)
	}

	evs, _ := ag.Events(sid)
	var kinds []string
	for _, ev := range evs {
		switch p := ev.Payload.(type) {
		case session.UserMessage:
			kinds = append(kinds, "prompt:"+p.Text)
		case session.UserSteer:
			kinds = append(kinds, "steer:"+p.Text)
		case session.ToolResult:
			kinds = append(kinds, "result")
		case session.AssistantMessage:
			kinds = append(kinds, "answer:"+p.Text)
		case session.TurnEnd:
			kinds = append(kinds, "end:"+p.StopReason)
		}
	}
	wantLog := []string{"prompt:read it", "answer:", "result", "steer:use upper case", "answer:first answer",
		"steer:and count the letters", "answer:second answer", "end:end_turn"}
	if d := cmp.Diff(wantLog, kinds); d != "" {
		t.Errorf("the log (-want +got):\n%s", d)
	}

	// The state is a fold of the log as stored: each event through its
	// log line and back.
	live := ag.liveSession(t, sid)
	folded := newState(ag.defaultControls(), func(m string) bool { return ag.models.Find(m) != nil })
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var back session.Event
		if err := json.Unmarshal(line, &back); err != nil {
			t.Fatal(err)
		}
		folded.apply(back)
	}
	live.mu.Lock()
	wantSt := snapshot(live.st)
	live.mu.Unlock()
	if diff := cmp.Diff(wantSt, snapshot(folded), stateOpts); diff != "" {
		t.Errorf("fold of the log differs from the live state (-live +folded):\n%s", diff)
	}

	// v2's edit_prompt of a steered message takes it back and what
	// followed it: the context is the one the message joined.
	var steered string
	for _, m := range live.rw.sentMessages(evs) {
		if m.user != nil && m.user.Text == "and count the letters" {
			steered = m.id
		}
	}
	if err := ag.RewindBefore(t.Context(), sid, steered); err != nil {
		t.Fatalf("edit_prompt of the steered message %q: %v", steered, err)
	}
	if d := cmp.Diff(want[:5], roles(&model.Request{Messages: append([]model.Message{{}}, live.history()...)})); d != "" {
		t.Errorf("the context after taking the steered message back (-want +got):\n%s", d)
	}
}

// A message steered into a turn that is cancelled before its next request
// is not lost: it is logged before the turn ends, and the next turn's
// request has it.
func TestSteeringIntoACancelledTurnIsKept(t *testing.T) {
	g := newGatedModel(model.Message{Role: model.RoleAssistant, Content: "ok"})
	e, ag := newEditorAgent(t, Options{Model: g})
	sid := e.newSession(t.TempDir())
	res := make(chan acp.StopReason, 1)
	go func() {
		stop, _ := e.prompt(sid, "go")
		res <- stop
	}()
	g.next(t)
	if got := e.steer(sid, "wait, also this"); got.Outcome != acp.SteeringInjected {
		t.Fatalf("steer = %+v", got)
	}
	if err := e.rpc.Notify(t.Context(), acp.MethodSessionCancel, acp.CancelNotification{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	if stop := <-res; stop != acp.StopCancelled {
		t.Fatalf("stop = %q", stop)
	}
	evs, _ := ag.Events(sid)
	steered, ended := -1, -1
	for i, ev := range evs {
		switch ev.Payload.(type) {
		case session.UserSteer:
			steered = i
		case session.TurnEnd:
			ended = i
		}
	}
	if steered < 0 || steered > ended {
		t.Fatalf("steered message at %d, turn end at %d: want it logged inside the turn", steered, ended)
	}
	go func() { _, _ = e.prompt(sid, "next") }()
	next := g.next(t)
	want := []string{"user:go", "user:wait, also this", "user:next"}
	if d := cmp.Diff(want, roles(next)); d != "" {
		t.Errorf("the next turn's request (-want +got):\n%s", d)
	}
	g.release <- struct{}{}
}

func toolText(t *testing.T, req *model.Request, id string) string {
	t.Helper()
	for _, m := range req.Messages {
		if m.Role == model.RoleTool && m.ToolCallID == id {
			return m.Content
		}
	}
	t.Fatalf("no result of %s in the request", id)
	return ""
}
