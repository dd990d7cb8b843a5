package acp

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

func ptr[T any](v T) *T { return &v }

// Every update variant we emit must marshal to what the official schema
// accepts, and decode back to the same value.
func TestUpdatesMatchTheSchemaAndRoundTrip(t *testing.T) {
	schema, err := acpschema.Default()
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	one := 1
	old := "a\nb\n"
	updates := []Update{
		&UserMessageChunk{Content: TextBlock("hello")},
		&AgentMessageChunk{Content: TextBlock(""), MessageID: "m1"},
		&AgentThoughtChunk{Content: TextBlock("thinking")},
		&AgentMessageChunk{Content: ContentBlock{Type: "resource_link", URI: "file:///a", Name: "a"}},
		&AgentMessageChunk{Content: ContentBlock{Type: "image", Data: "aGk=", MimeType: "image/png"}},
		&AgentMessageChunk{Content: ContentBlock{Type: "resource", Resource: &EmbeddedResource{URI: "file:///a", Text: ptr("x")}}},
		&ToolCall{ToolCallID: "c1", Title: "Read a.go", Kind: KindRead, Status: StatusPending,
			Locations: []ToolCallLocation{{Path: "/w/a.go", Line: &one}}, RawInput: json.RawMessage(`{"file_path":"a.go"}`)},
		&ToolCall{ToolCallID: "c2", Title: "go test ./...", Kind: KindExecute, Status: StatusInProgress,
			Content: []ToolCallContent{TerminalItem("c2")}, Meta: Meta{"terminal_info": map[string]any{"terminal_id": "c2", "cwd": "/w"}}},
		&ToolCallUpdate{ToolCallID: "c1", Status: ptr(StatusCompleted), Content: []ToolCallContent{ContentItem(TextBlock("ok"))},
			RawOutput: json.RawMessage(`{"content":"ok"}`)},
		&ToolCallUpdate{ToolCallID: "c3", Title: ptr("Edit a.go"), Kind: ptr(KindEdit),
			Content: []ToolCallContent{DiffItem("/w/a.go", &old, "a\nc\n"), DiffItem("/w/new.go", nil, "x")}},
		&ToolCallUpdate{ToolCallID: "c4", Content: []ToolCallContent{}, Locations: []ToolCallLocation{}},
		&Plan{Entries: []PlanEntry{{Content: "step", Priority: "medium", Status: "pending"}}},
		&Plan{Entries: []PlanEntry{}},
		&AvailableCommandsUpdate{AvailableCommands: []AvailableCommand{{Name: "help", Description: "Show help", Input: &CommandInput{Hint: "topic"}}}},
		&CurrentModeUpdate{CurrentModeID: "ask"},
		&ConfigOptionUpdate{ConfigOptions: []ConfigOption{{ID: "mode", Name: "Mode", Type: "select", CurrentValue: "ask",
			Options: []ConfigSelectOption{{Value: "ask", Name: "Ask"}}}}},
		&SessionInfoUpdate{Title: ptr("A title"), UpdatedAt: ptr("2026-12-02T10:00:00Z")},
		&SessionInfoUpdate{},
		&UsageUpdate{Used: 10, Size: 100, Cost: &Cost{Amount: 0.5, Currency: "USD"}},
	}
	for _, u := range updates {
		t.Run(u.UpdateKind(), func(t *testing.T) {
			b, err := json.Marshal(SessionNotification{SessionID: "s", Update: u})
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate("SessionNotification", b); err != nil {
				t.Fatalf("%s\n%v", b, err)
			}
			var back SessionNotification
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			again, _ := json.Marshal(back)
			if string(again) != string(b) {
				t.Errorf("round trip changed it:\n%s\n%s", b, again)
			}
			if reflect.TypeOf(back.Update) != reflect.TypeOf(u) {
				t.Errorf("decoded as %T, want %T", back.Update, u)
			}
		})
	}
}

func TestResponsesMatchTheSchema(t *testing.T) {
	schema, err := acpschema.Default()
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	cases := []struct {
		def string
		v   any
	}{
		{"InitializeResponse", InitializeResponse{ProtocolVersion: 1, AgentInfo: &Implementation{Name: "a", Version: "1"},
			AgentCapabilities: AgentCapabilities{SessionCapabilities: SessionCapabilities{Close: &Empty{}}}, AuthMethods: []AuthMethod{}}},
		{"NewSessionResponse", NewSessionResponse{SessionID: "s"}},
		{"PromptResponse", PromptResponse{StopReason: StopCancelled}},
		{"CloseSessionResponse", EmptyResponse{}},
		{"RequestPermissionRequest", RequestPermissionRequest{SessionID: "s", ToolCall: ToolCallUpdate{ToolCallID: "c", Title: ptr("ls")},
			Options: []PermissionOption{{OptionID: "a", Name: "Allow once", Kind: AllowOnce}, {OptionID: "r", Name: "Reject always", Kind: RejectAlways}}}},
		{"ReadTextFileRequest", ReadTextFileRequest{SessionID: "s", Path: "/a", Line: ptr(1), Limit: ptr(10)}},
		{"WriteTextFileRequest", WriteTextFileRequest{SessionID: "s", Path: "/a", Content: ""}},
		{"Error", Error{Code: CodeInvalidParams, Message: "bad"}},
	}
	for _, c := range cases {
		b, _ := json.Marshal(c.v)
		if err := schema.Validate(c.def, b); err != nil {
			t.Errorf("%s: %s\n%v", c.def, b, err)
		}
	}
}

// The validator must reject what the schema forbids, or the tests above prove nothing.
func TestSchemaRejectsBadMessages(t *testing.T) {
	schema, err := acpschema.Default()
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	for _, bad := range []string{
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call","title":"x"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"no_such_update"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text"}}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"cancelled"}}`,
	} {
		if err := schema.Validate("SessionNotification", []byte(bad)); err == nil {
			t.Errorf("schema accepted %s", bad)
		}
	}
}
