package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/tools/todo"
)

// TestReplayLeavesOutRefusedTurns: after a refusal the editor removes the
// user's message and what followed it from the thread (Zed, unless a tool
// call with a card completed in the turn), so a reloaded thread leaves that
// turn out; a refused turn that completed a carded call stays, as it did
// live.
func TestReplayLeavesOutRefusedTurns(t *testing.T) {
	e := newStEnv(t)
	e.tools = todo.Register
	a1, c1 := e.agent(stScript(t,
		`{"parts":[{"text":"first answer"}]}`,
		`{"parts":[{"text":"I can't help with that."}],"finish":"content_filter"}`,
		`{"parts":[{"tool_call":{"id":"r1","name":"read","arguments":{"file_path":"a.go"}}}]}`,
		`{"parts":[{"text":"Nor with that."}],"finish":"content_filter"}`,
		`{"parts":[{"tool_call":{"id":"p1","name":"todo_write","arguments":{"todos":[{"content":"Plan it","status":"in_progress"}]}}}]}`,
		`{"parts":[{"text":"Not that either."}],"finish":"content_filter"}`,
		`{"parts":[{"text":"third answer"}]}`), acp.ClientCapabilities{})
	id := e.newSession(a1)
	var want []string
	for _, p := range []struct {
		text  string
		stop  acp.StopReason
		shown bool
	}{
		{"one", acp.StopEndTurn, true},
		{"refused", acp.StopRefusal, false},
		{"read, then refused", acp.StopRefusal, true},
		// todo_write has no card (its list is the plan), so the editor
		// removed this turn although the call completed.
		{"plan, then refused", acp.StopRefusal, false},
		{"three", acp.StopEndTurn, true},
	} {
		n := c1.count()
		r, err := a1.Prompt(t.Context(), &acp.PromptRequest{SessionID: id, Prompt: []acp.ContentBlock{acp.TextBlock(p.text)}})
		if err != nil || r.StopReason != p.stop {
			t.Fatalf("%s: stop %v, err %v; want %s", p.text, r, err, p.stop)
		}
		live := content(c1.since(n))
		if len(live) == 0 {
			t.Fatalf("%s: nothing shown live", p.text)
		}
		if p.shown {
			want = append(want, userChunk(id, p.text))
			want = append(want, live...)
			continue
		}
		// What is not transcript is replayed as it came: the plan panel
		// showed the list.
		for _, u := range live {
			if strings.Contains(u, `"sessionUpdate":"plan"`) {
				want = append(want, u)
			}
		}
	}
	if _, err := a1.CloseSession(t.Context(), &acp.CloseSessionRequest{SessionID: id}); err != nil {
		t.Fatal(err)
	}

	a2, c2 := e.agent(stScript(t), acp.ClientCapabilities{})
	if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	got := content(c2.since(0))
	if !slices.Equal(got, want) {
		t.Errorf("replay (-want +got):\n%s", lineDiff(want, got))
	}
	for _, u := range got {
		if strings.Contains(u, "help with that") || strings.Contains(u, `"text":"refused"`) {
			t.Errorf("the refused turn is replayed: %s", u)
		}
	}
	// The live session still holds the whole log: only the replay leaves
	// the turn out.
	if !slices.ContainsFunc(a2.liveSession(t, id).log.Events(), func(ev session.Event) bool {
		m, ok := ev.Payload.(session.UserMessage)
		return ok && m.Text == "refused"
	}) {
		t.Errorf("the refused turn is gone from the log")
	}
}
