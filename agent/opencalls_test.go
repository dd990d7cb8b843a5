package agent

import (
	"encoding/json"
	"testing"

	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/google/go-cmp/cmp"
)

// TestOpenCallsFold: the one record of open calls decides what enters the
// model's context: the step's results under the endpoint's ids, a
// sub-call's additional context with its step's, nothing for a result
// given twice or after the step was dropped, and the calls left open.
func TestOpenCallsFold(t *testing.T) {
	args := json.RawMessage(`{}`)
	resp := func(calls ...session.MessageCall) session.Event {
		return session.New(session.AssistantMessage{ToolCalls: calls})
	}
	call := func(id, parent string) session.Event {
		return session.New(session.ToolCall{CallID: id, Name: "read", Args: args, Parent: parent})
	}
	result := func(id string, context ...string) session.Event {
		return session.New(session.ToolResult{CallID: id, Result: registry.Result{Content: []registry.Content{registry.Text("r " + id)}, Context: context}})
	}
	tool := func(id, text string) model.Message {
		return model.Message{Role: model.RoleTool, ToolCallID: id, Content: text}
	}
	user := func(text string) model.Message { return model.Message{Role: model.RoleUser, Content: text} }
	for _, tt := range []struct {
		name string
		evs  []session.Event
		want []model.Message // history after the assistant messages
		open []string
	}{
		{"the step's results, endpoint ids", []session.Event{
			resp(session.MessageCall{ID: "call_0", Name: "read"}, session.MessageCall{ID: "call_0", Name: "read", CardID: "call_0-2"}),
			call("call_0", ""), call("call_0-2", ""), result("call_0-2"), result("call_0"),
		}, []model.Message{tool("call_0", "r call_0-2"), tool("call_0", "r call_0")}, nil},
		{"context follows the step's last result", []session.Event{
			resp(session.MessageCall{ID: "a", Name: "read"}, session.MessageCall{ID: "b", Name: "read"}),
			call("a", ""), call("b", ""), result("a", "ctx a"), result("b", "ctx b"),
		}, []model.Message{tool("a", "r a"), tool("b", "r b"), user("ctx a\n\nctx b")}, nil},
		{"a sub-call's context joins its step", []session.Event{
			resp(session.MessageCall{ID: "p", Name: "run_code"}),
			call("p", ""), call("p:code:1", "p"), result("p:code:1", "from the hook"), result("p"),
		}, []model.Message{tool("p", "r p"), user("from the hook")}, nil},
		{"a second result is not read", []session.Event{
			resp(session.MessageCall{ID: "a", Name: "read"}), call("a", ""), result("a"), result("a"),
		}, []model.Message{tool("a", "r a")}, nil},
		{"a reset drops the step: its result is not read", []session.Event{
			resp(session.MessageCall{ID: "a", Name: "read"}), call("a", ""), session.New(session.ContextReset{}), result("a"),
		}, nil, nil},
		{"open in the order made, asked-for calls too", []session.Event{
			resp(session.MessageCall{ID: "a", Name: "read"}, session.MessageCall{ID: "b", Name: "read"}), call("b", ""), call("init", ""),
		}, []model.Message{}, []string{"a", "b", "init"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := newState(ctlState{}, nil)
			for _, ev := range tt.evs {
				st.apply(ev)
			}
			var got []model.Message
			for _, m := range st.history {
				if m.Role != model.RoleAssistant {
					got = append(got, m)
				}
			}
			if len(tt.want) == 0 && len(got) == 0 {
				got = tt.want
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("context (-want +got):\n%s", d)
			}
			var open []string
			for _, c := range st.open {
				open = append(open, c.call.CallID)
			}
			if d := cmp.Diff(tt.open, open); d != "" {
				t.Errorf("open calls (-want +got):\n%s", d)
			}
		})
	}
}
