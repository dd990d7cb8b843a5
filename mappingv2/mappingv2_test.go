package mappingv2

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/session"
)

func ev(seq int64, p session.Payload) session.Event { return session.Event{Seq: seq, Payload: p} }

func ptr[T any](v T) *T { return &v }

// TestTranslate: what only v2 has, event by event: the foreground state,
// user messages by id, message ids from log positions, the replay cursor.
func TestTranslate(t *testing.T) {
	prompt, _ := json.Marshal([]acp.ContentBlock{acp.TextBlock("hi")})
	cursor := func(n int64) acp.Meta { return acp.Meta{acp.MetaReplayFrom: acp.ReplayCursor(n)} }
	tests := []struct {
		name   string
		replay bool
		evs    []session.Event
		want   [][]acp.Update
	}{
		{"a turn", false, []session.Event{
			ev(1, session.UserMessage{Prompt: prompt, Text: "hi", MessageID: "m1"}),
			ev(2, session.TurnStart{Turn: 1}),
			ev(3, session.AssistantChunk{Kind: "thought", Text: "hm"}),
			ev(4, session.AssistantChunk{Kind: "text", Text: "Hel"}),
			ev(5, session.AssistantChunk{Kind: "text", Text: "lo"}),
			ev(6, session.AssistantMessage{Text: "Hello"}),
			ev(7, session.AssistantChunk{Kind: "text", Text: "More"}),
			ev(8, session.TurnEnd{Turn: 1, StopReason: "end_turn"}),
		}, [][]acp.Update{
			{acp.V2UserMessage{MessageID: "m1", Content: []acp.ContentBlock{acp.TextBlock("hi")}}},
			{acp.V2StateUpdate{State: acp.StateRunning}},
			{acp.AgentThoughtChunk{Content: acp.TextBlock("hm"), MessageID: "thought-3"}},
			{acp.AgentMessageChunk{Content: acp.TextBlock("Hel"), MessageID: "agent-4"}},
			{acp.AgentMessageChunk{Content: acp.TextBlock("lo"), MessageID: "agent-4"}},
			nil,
			{acp.AgentMessageChunk{Content: acp.TextBlock("More"), MessageID: "agent-7"}},
			{acp.V2StateUpdate{State: acp.StateIdle, StopReason: acp.StopEndTurn, Meta: cursor(9)}},
		}},
		{"a failed turn; a message logged before v2", false, []session.Event{
			ev(4, session.UserMessage{Prompt: prompt, Text: "hi"}),
			ev(5, session.TurnStart{Turn: 2}),
			ev(6, session.TurnEnd{Turn: 2, StopReason: "end_turn", Error: "model unreachable"}),
		}, [][]acp.Update{
			{acp.V2UserMessage{MessageID: "user-4", Content: []acp.ContentBlock{acp.TextBlock("hi")}}},
			{acp.V2StateUpdate{State: acp.StateRunning}},
			{acp.V2StateUpdate{State: acp.StateIdle, StopReason: acp.StopError, Meta: cursor(7),
				Error: &acp.Error{Code: acp.CodeInternalError, Message: "model unreachable"}}},
		}},
		{"steered: shown live by the client, replayed", true, []session.Event{
			ev(3, session.UserSteer{Prompt: prompt, Text: "hi"}),
		}, [][]acp.Update{
			{acp.V2UserMessage{MessageID: "user-3", Content: []acp.ContentBlock{acp.TextBlock("hi")}}},
		}},
		{"a permission wait", false, []session.Event{
			ev(1, session.TurnStart{Turn: 1}),
			ev(2, session.ToolCall{CallID: "c1", Name: "mystery", Args: json.RawMessage(`{}`)}),
			ev(3, session.ToolStatus{CallID: "c1", Status: "awaiting_permission"}),
			ev(4, session.ToolStatus{CallID: "c1", Status: "running"}),
		}, [][]acp.Update{
			{acp.V2StateUpdate{State: acp.StateRunning}},
			{acp.V2ToolCallUpdate{ToolCallID: "c1", Name: "mystery", Title: ptr("mystery"), Kind: ptr(acp.KindOther),
				Status: ptr(acp.StatusPending), Content: []acp.V2ToolCallContent{}, RawInput: json.RawMessage(`{}`)}},
			{acp.V2StateUpdate{State: acp.StateRequiresAction}},
			{acp.V2StateUpdate{State: acp.StateRunning},
				acp.V2ToolCallUpdate{ToolCallID: "c1", Name: "mystery", Status: ptr(acp.StatusInProgress)}},
		}},
		{"plan and commands", false, []session.Event{
			ev(1, session.Plan{Entries: []session.PlanEntry{{Content: "a", Priority: "high", Status: "pending"}}}),
			ev(2, session.Commands{Commands: []session.Command{{Name: "help", Description: "List"}, {Name: "mode", Description: "Mode", Hint: "ask"}}}),
		}, [][]acp.Update{
			{acp.V2PlanUpdate{Plan: acp.V2Plan{Type: "items", PlanID: PlanID, Entries: []acp.PlanEntry{{Content: "a", Priority: "high", Status: "pending"}}}}},
			{acp.V2AvailableCommandsUpdate{AvailableCommands: []acp.V2AvailableCommand{{Type: "command", Name: "help", Description: "List"},
				{Type: "command", Name: "mode", Description: "Mode", Input: &acp.V2CommandInput{Type: "text", Hint: "ask"}}}}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := New(nil, mapping.Options{Cwd: "/w", Replay: tc.replay})
			for i, e := range tc.evs {
				if d := cmp.Diff(tc.want[i], tr.Translate(e)); d != "" {
					t.Errorf("event %d (%T) (-want +got):\n%s", i, e.Payload, d)
				}
			}
		})
	}
}

// TestSnapshot: a resume's state after a replay: idle with the last stop
// reason and the cursor of what follows, or running.
func TestSnapshot(t *testing.T) {
	tr := New(nil, mapping.Options{Cwd: "/w", Replay: true})
	for _, e := range []session.Event{ev(1, session.TurnStart{Turn: 1}), ev(2, session.TurnEnd{Turn: 1, StopReason: "cancelled"}), ev(3, session.Title{Title: "x"})} {
		tr.Translate(e)
	}
	want := acp.V2StateUpdate{State: acp.StateIdle, StopReason: acp.StopCancelled, Meta: acp.Meta{acp.MetaReplayFrom: acp.ReplayCursor(4)}}
	if d := cmp.Diff(acp.Update(want), tr.Snapshot(false)); d != "" {
		t.Errorf("idle snapshot (-want +got):\n%s", d)
	}
	if d := cmp.Diff(acp.Update(acp.V2StateUpdate{State: acp.StateRunning}), tr.Snapshot(true)); d != "" {
		t.Errorf("running snapshot (-want +got):\n%s", d)
	}
}

func TestContent(t *testing.T) {
	old := "a\nb\n"
	got := Content([]acp.ToolCallContent{
		acp.ContentItem(acp.TextBlock("note")),
		acp.DiffItem("/w/new.txt", nil, "x\ny"),
		acp.DiffItem("/w/m.txt", &old, "a\nc\n"),
		acp.DiffItem("/w/m.txt", ptr("z\n"), "y\n"),
		acp.TerminalItem("t1"),
	})
	text := acp.TextBlock("note")
	want := []acp.V2ToolCallContent{
		{Type: "content", Content: &text},
		{Type: "diff", Changes: []acp.V2DiffChange{{Operation: "add", Path: "/w/new.txt", FileType: "text"}},
			Patch: &acp.V2DiffPatch{Format: "git_patch", Text: "diff --git /w/new.txt /w/new.txt\nnew file mode 100644\n--- /dev/null\n+++ /w/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n"}},
		{Type: "diff", Changes: []acp.V2DiffChange{{Operation: "modify", Path: "/w/m.txt", FileType: "text"}},
			Meta: acp.Meta{MetaHunks: []map[string]any{{"oldText": "a\nb\n", "newText": "a\nc\n"}, {"oldText": "z\n", "newText": "y\n"}}}},
		{Type: "terminal", TerminalID: "t1"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestPermission(t *testing.T) {
	title := "Run ls"
	req := &acp.RequestPermissionRequest{SessionID: "s", ToolCall: acp.ToolCallUpdate{ToolCallID: "c1", Title: &title, Name: "bash"},
		Options: []acp.PermissionOption{{OptionID: "allow-once", Name: "Allow", Kind: acp.AllowOnce}}}
	want := &acp.V2RequestPermissionRequest{SessionID: "s", Title: "Run ls",
		Subject: &acp.V2PermissionSubject{Type: "tool_call", ToolCall: acp.V2ToolCallUpdate{ToolCallID: "c1", Title: &title, Name: "bash"}},
		Options: req.Options}
	if d := cmp.Diff(want, Permission(req)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
