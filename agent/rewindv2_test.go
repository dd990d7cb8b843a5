package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/session"
)

// cutResponses are two turns: the first thinks, says something and reads
// a file, then answers; the second answers at once.
var cutResponses = []string{
	`{"parts":[{"thought":"Let me look."},{"text":"Looking."},{"tool_call":{"name":"read","arguments":{"file_path":"a.go"}}}]}`,
	`{"parts":[{"text":"Read it."}]}`,
	`{"parts":[{"text":"Second."}]}`,
}

// messageIDs are the ids of the messages in updates, by their text (the
// chunks of one message joined).
func messageIDs(t *testing.T, updates []string) map[string]string {
	t.Helper()
	text := map[string]string{} // id -> text
	var order []string
	for _, u := range updates {
		kind, id, content, _ := updateOf(t, u)
		switch kind {
		case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk":
			if _, seen := text[id]; !seen {
				order = append(order, id)
			}
			text[id] += content
		}
	}
	out := map[string]string{}
	for _, id := range order {
		out[strings.TrimSpace(text[id])] = id
	}
	return out
}

// shown is the text of the messages a replay shows, and the titles of its
// cards, in order.
func shown(t *testing.T, updates []string) []string {
	t.Helper()
	var out []string
	last := ""
	for _, u := range updates {
		switch kind, id, content, title := updateOf(t, u); kind {
		case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk":
			if id == last {
				out[len(out)-1] += content
				continue
			}
			out, last = append(out, content), id
		case "tool_call":
			out, last = append(out, "card: "+title), ""
		}
	}
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

// updateOf reads a session/update: its kind, a chunk's message id and
// text, a card's title.
func updateOf(t *testing.T, u string) (kind, id, text, title string) {
	t.Helper()
	var n struct {
		Update struct {
			Kind      string          `json:"sessionUpdate"`
			MessageID string          `json:"messageId"`
			Content   json.RawMessage `json:"content"`
			Title     string          `json:"title"`
		} `json:"update"`
	}
	if err := json.Unmarshal([]byte(u), &n); err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(n.Update.Kind, "_chunk") {
		var b acp.ContentBlock
		if err := json.Unmarshal(n.Update.Content, &b); err != nil {
			t.Fatal(err)
		}
		text = b.Text
	}
	return n.Update.Kind, n.Update.MessageID, text, n.Update.Title
}

// contextOf is what a model request holds after the system prompt: each
// message as role and text, with its calls and the call a result answers.
func contextOf(msgs []model.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == model.RoleSystem {
			continue
		}
		s := m.Role + ": " + m.Content
		if m.Reasoning != "" {
			s += " (thinking: " + m.Reasoning + ")"
		}
		for _, c := range m.ToolCalls {
			s += " [calls " + c.Name + "]"
		}
		if m.Role == model.RoleTool {
			s = "tool result"
		}
		out = append(out, s)
	}
	return out
}

// TestRewindToMessage: v2's session/rewind keeps the log up to and
// including the message named, wherever it is in its turn, and takes back
// what follows: the answer to a prompt, the call an answer made with its
// result, the text after a thought. The model's next request holds the
// context as it was after that message (an answer without the calls whose
// results went), the answer names the message, and a new process loading
// the session replays up to it and sends the same request. A fork at the
// message keeps the same.
func TestRewindToMessage(t *testing.T) {
	turn1 := []string{"user: one", "assistant: Looking. (thinking: Let me look.) [calls read]", "tool result", "assistant: Read it."}
	tests := []struct {
		name    string
		at      string   // the text of the message named
		context []string // the next request's, before the new prompt
		replay  []string // what a load replays
	}{
		{"a prompt", "one", []string{"user: one"}, []string{"one"}},
		{"a thought", "Let me look.", []string{"user: one"}, []string{"one", "Let me look."}},
		{"an answer that made a call", "Looking.", []string{"user: one", "assistant: Looking. (thinking: Let me look.)"},
			[]string{"one", "Let me look.", "Looking."}},
		{"the last answer of a turn", "Read it.", turn1,
			[]string{"one", "Let me look.", "Looking.", "card: Read a.go", "Read it."}},
		{"the second prompt", "two", append(turn1[:4:4], "user: two"),
			[]string{"one", "Let me look.", "Looking.", "card: Read a.go", "Read it.", "two"}},
		{"the last message: nothing to take back", "Second.", append(turn1[:4:4], "user: two", "assistant: Second."),
			[]string{"one", "Let me look.", "Looking.", "card: Read a.go", "Read it.", "two", "Second."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newStEnv(t)
			rec := &recorder{p: stScript(t, append(cutResponses, `{"parts":[{"text":"forked"}]}`)...)}
			a, _ := e.agent(rec, acp.ClientCapabilities{})
			id := e.newSession(a)
			e.promptStop(a, id, "one")
			e.promptStop(a, id, "two")
			ids := messageIDs(t, replayOf(t, a, id))
			at, ok := ids[tc.at]
			if !ok {
				t.Fatalf("no message %q among %v", tc.at, ids)
			}
			// A fork at the message (AIR's _meta.jetbrains.air.fork) keeps
			// the same: the source up to and including it.
			fork, err := a.ForkSession(t.Context(), &acp.ForkSessionRequest{SessionID: id, Cwd: e.cwd,
				Meta: acp.Meta{"jetbrains": map[string]any{"air": map[string]any{"fork": map[string]any{"messageId": at}}}}})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.replay, shown(t, replayOf(t, a, fork.SessionID))); d != "" {
				t.Errorf("the fork's replay (-want +got):\n%s", d)
			}
			e.promptStop(a, fork.SessionID, "in the fork")
			if d := cmp.Diff(append(slices.Clone(tc.context), "user: in the fork"), contextOf(rec.last())); d != "" {
				t.Errorf("the fork's request (-want +got):\n%s", d)
			}

			r, err := a.RewindTo(t.Context(), &acp.V2RewindRequest{SessionID: id, ToMessageID: at})
			if err != nil || r.LastMessageID != at {
				t.Fatalf("RewindTo = %+v, %v; want lastMessageId %s", r, err, at)
			}
			if d := cmp.Diff(tc.replay, shown(t, replayOf(t, a, id))); d != "" {
				t.Errorf("the live replay (-want +got):\n%s", d)
			}
			if _, err := a.CloseSession(t.Context(), &acp.CloseSessionRequest{SessionID: id}); err != nil {
				t.Fatal(err)
			}

			// A new process loads it and goes on from the message.
			rec2 := &recorder{p: stScript(t, `{"parts":[{"text":"next"}]}`)}
			a2, c2 := e.agent(rec2, acp.ClientCapabilities{})
			if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.replay, shown(t, c2.since(0))); d != "" {
				t.Errorf("the replay in a new process (-want +got):\n%s", d)
			}
			e.promptStop(a2, id, "next")
			if d := cmp.Diff(append(slices.Clone(tc.context), "user: next"), contextOf(rec2.last())); d != "" {
				t.Errorf("the next request (-want +got):\n%s", d)
			}
		})
	}
}

// TestRewindToMessageErrors: an id the agent never sent is the draft's
// -32002 with reason unknown_message_id, and edit_prompt's message must be
// a user's (-32602, not_a_user_message); neither changes anything.
func TestRewindToMessageErrors(t *testing.T) {
	e := newStEnv(t)
	rec := &recorder{p: stScript(t, append(cutResponses, `{"parts":[{"text":"next"}]}`)...)}
	a, _ := e.agent(rec, acp.ClientCapabilities{})
	id := e.newSession(a)
	e.promptStop(a, id, "one")
	e.promptStop(a, id, "two")
	before := len(a.liveSession(t, id).log.Events())
	ids := messageIDs(t, replayOf(t, a, id))
	for _, tc := range []struct {
		name   string
		err    error
		code   int
		reason string
	}{
		{"rewind to an unknown id", func() error {
			_, err := a.RewindTo(t.Context(), &acp.V2RewindRequest{SessionID: id, ToMessageID: "agent-9999"})
			return err
		}(), acp.CodeResourceNotFound, "unknown_message_id"},
		{"edit an unknown id", a.RewindBefore(t.Context(), id, "user-9999"), acp.CodeResourceNotFound, "unknown_message_id"},
		{"edit an agent's message", a.RewindBefore(t.Context(), id, ids["Looking."]), acp.CodeInvalidParams, "not_a_user_message"},
	} {
		var ae *acp.Error
		if !isCode(tc.err, tc.code) || !strings.Contains(fmt.Sprint(asErr(tc.err, &ae).Data), tc.reason) {
			t.Errorf("%s: %v, want %d with reason %s", tc.name, tc.err, tc.code, tc.reason)
		}
	}
	if after := len(a.liveSession(t, id).log.Events()); after != before {
		t.Errorf("the refusals logged %d events", after-before)
	}
	e.promptStop(a, id, "next")
	if got := contextOf(rec.last()); len(got) != 7 {
		t.Errorf("the refusals changed the context: %q", got)
	}
}

func asErr(err error, ae **acp.Error) *acp.Error {
	if e, ok := err.(*acp.Error); ok {
		*ae = e
		return e
	}
	return &acp.Error{}
}

// A notice the turn says between a prompt and its entry into the context
// (a hook that failed, a sandbox that is off; agent text on a client
// without notices) is no part of the prompt: a rewind to the prompt keeps
// the prompt, and what its hooks added, in the context.
func TestRewindToPromptPastANotice(t *testing.T) {
	e := newStEnv(t)
	text := func(s string) json.RawMessage { b, _ := json.Marshal([]acp.ContentBlock{acp.TextBlock(s)}); return b }
	e.writeLog("noticed",
		session.New(session.UserMessage{Prompt: text("one"), Text: "one"}),
		session.New(session.TurnStart{Turn: 1}),
		session.New(session.Notice{Text: "A hook failed."}),
		session.New(session.UserContext{Context: []string{"from a hook"}}),
		session.New(session.AssistantChunk{Kind: "text", Text: "First."}),
		session.New(session.AssistantMessage{Text: "First."}),
		session.New(session.TurnEnd{Turn: 1, StopReason: "end_turn"}),
	)
	rec := &recorder{p: stScript(t, `{"parts":[{"text":"next"}]}`)}
	a, c := e.agent(rec, acp.ClientCapabilities{})
	if _, err := a.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: "noticed", Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	one := messageIDs(t, c.since(0))["one"]
	if r, err := a.RewindTo(t.Context(), &acp.V2RewindRequest{SessionID: "noticed", ToMessageID: one}); err != nil || r.LastMessageID != one {
		t.Fatalf("RewindTo = %+v, %v", r, err)
	}
	e.promptStop(a, "noticed", "next")
	if d := cmp.Diff([]string{"user: one", "user: from a hook", "user: next"}, contextOf(rec.last())); d != "" {
		t.Errorf("the next request (-want +got):\n%s", d)
	}
}
