package mapping

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acp-bridge/acp-bridge/session"
)

// TestMessageIDs: every message chunk names its message by the log
// position where it began; a response, a tool call, a prompt or a turn's
// end starts the next one; agent text the agent says joins the message
// being streamed. The same events give the same ids.
func TestMessageIDs(t *testing.T) {
	prompt, _ := json.Marshal([]map[string]string{{"type": "text", "text": "hi"}})
	at := func(seq int64, p session.Payload) session.Event { return session.Event{Seq: seq, Payload: p} }
	evs := []session.Event{
		at(1, session.UserMessage{Prompt: prompt, Text: "hi"}),
		at(2, session.TurnStart{Turn: 1}),
		at(3, session.AssistantChunk{Kind: "thought", Text: "think"}),
		at(4, session.AssistantChunk{Kind: "text", Text: "one "}),
		at(5, session.AssistantChunk{Kind: "thought", Text: "more"}),
		at(6, session.AssistantChunk{Kind: "text", Text: "two"}),
		at(7, session.AssistantMessage{Text: "one two"}),
		at(8, session.Notice{Text: "said by the agent"}),
		at(9, session.AssistantChunk{Kind: "text", Text: "three"}),
		at(10, session.TurnEnd{Turn: 1}),
		at(11, session.UserMessage{Prompt: prompt, Text: "hi", MessageID: "msg_v2"}),
	}
	ids := func() []string {
		var out []string
		for _, line := range run(t, Options{Cwd: cwd, Replay: true}, evs...) {
			var u struct {
				Kind string `json:"sessionUpdate"`
				ID   string `json:"messageId"`
			}
			json.Unmarshal([]byte(line), &u)
			out = append(out, strings.TrimSuffix(u.Kind, "_chunk")+" "+u.ID)
		}
		return out
	}
	want := []string{"user_message user-1", "agent_thought thought-3", "agent_message agent-4", "agent_thought thought-3",
		"agent_message agent-4", "agent_message agent-8", "agent_message agent-8", "user_message msg_v2"}
	got := ids()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
	if d := cmp.Diff(got, ids()); d != "" {
		t.Errorf("the same events gave other ids (-first +second):\n%s", d)
	}
}
