package session

import (
	"encoding/json"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/google/go-cmp/cmp"
)

// TestPromptBlocks: a prompt's blocks come from the event's decode when it
// has one (nothing is decoded again), else from Prompt; WithBlocks decodes
// a stored prompt once, for a UserMessage and a UserSteer alike.
func TestPromptBlocks(t *testing.T) {
	text := []acp.ContentBlock{acp.TextBlock("hi")}
	raw, _ := json.Marshal(text)
	for _, tt := range []struct {
		name   string
		m      UserMessage
		want   []acp.ContentBlock
		wantOK bool
	}{
		{"decoded already: Prompt is not read", UserMessage{Prompt: json.RawMessage(`not json`), Blocks: text}, text, true},
		{"stored only", UserMessage{Prompt: raw}, text, true},
		{"a prompt that is no block list", UserMessage{Prompt: json.RawMessage(`{"x":1}`)}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.m.PromptBlocks()
			if ok != tt.wantOK || cmp.Diff(tt.want, got) != "" {
				t.Errorf("PromptBlocks = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
			for _, ev := range []Event{New(tt.m), New(UserSteer(tt.m))} {
				var blocks []acp.ContentBlock
				switch p := WithBlocks(ev).Payload.(type) {
				case UserMessage:
					blocks = p.Blocks
				case UserSteer:
					blocks = p.Blocks
				}
				if cmp.Diff(tt.want, blocks) != "" {
					t.Errorf("WithBlocks(%s) blocks = %v, want %v", ev.Type(), blocks, tt.want)
				}
			}
		})
	}
	if n := New(Notice{Text: "x"}); cmp.Diff(n, WithBlocks(n)) != "" {
		t.Error("WithBlocks changed an event without a prompt")
	}
}
