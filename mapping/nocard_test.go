package mapping

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// A call whose presenter says NoCard (todo_write: its list is the plan)
// gets no card while it runs or when it succeeds; a failed one gets a whole
// failed card, since the editor never saw the call. Nothing else changes.
func TestNoCard(t *testing.T) {
	ts := testTools(t)
	define(t, ts, registry.Tool[pathArgs, string]{Name: "planner",
		PresentCall: func(pathArgs) registry.View { return registry.NoCard{} }})
	call := func(id string) session.Event {
		return session.New(session.ToolCall{CallID: id, Name: "planner", Args: json.RawMessage(`{"path":"p"}`)})
	}
	tests := []struct {
		name string
		evs  []session.Event
		want []string // substrings, one per update, in order
	}{
		{"succeeds", []session.Event{call("a"),
			session.New(session.ToolStatus{CallID: "a", Status: "running"}),
			session.New(session.ToolOutput{CallID: "a", Data: "x"}),
			session.New(session.ToolResult{CallID: "a", Result: registry.Result{Content: []registry.Content{registry.Text("ok")}}})},
			nil},
		{"fails", []session.Event{call("b"),
			session.New(session.ToolStatus{CallID: "b", Status: "running"}),
			session.New(session.ToolResult{CallID: "b", Result: registry.ErrorResult("INVALID_ARGS", "todos[0].content is empty")})},
			[]string{`"sessionUpdate":"tool_call","toolCallId":"b"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := New(ts, Options{Cwd: cwd})
			var got []string
			for _, ev := range tt.evs {
				got = append(got, wire(t, tr.Translate(ev))...)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("updates %q, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) || !strings.Contains(got[i], `"status":"failed"`) || !strings.Contains(got[i], "content is empty") {
					t.Errorf("update %d = %s, want a whole failed card with the error (%s)", i, got[i], w)
				}
			}
			if _, known := tr.PermissionToolCall("a"); known {
				t.Errorf("a call without a card has a permission card")
			}
		})
	}
	if Carded(ts, session.ToolCall{Name: "planner", Args: json.RawMessage(`{"path":"p"}`)}) || !Carded(ts, session.ToolCall{Name: "look", Args: json.RawMessage(`{"path":"p"}`)}) {
		t.Errorf("Carded is wrong")
	}
}
