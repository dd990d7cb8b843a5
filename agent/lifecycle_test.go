package agent

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mcpclient/mcptest"
	"github.com/acp-bridge/acp-bridge/tools/bash"
)

// session/load of a session live on this connection replays it again and
// answers with its controls; no update of the replay follows the response,
// and the session goes on as it was (ACP-LOAD-001..003).
func TestLoadOfALiveSessionReplays(t *testing.T) {
	e := newStEnv(t)
	a, c := e.agent(stScript(t, stResponses[1], stResponses[1]), acp.ClientCapabilities{})
	id := e.newSession(a)
	if _, err := a.SetSessionMode(t.Context(), &acp.SetModeRequest{SessionID: id, ModeID: ModePlan}); err != nil {
		t.Fatal(err)
	}
	live := e.prompt(a, c, id, stPrompts[1])
	n := c.count()
	resp, err := a.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatalf("load of a live session: %v", err)
	}
	if resp.Modes == nil || resp.Modes.CurrentModeID != ModePlan || len(resp.ConfigOptions) == 0 {
		t.Errorf("response = %+v, want the controls with mode plan", resp)
	}
	replayed := content(c.since(n))
	if len(replayed) == 0 || replayed[len(replayed)-1] != live[len(live)-1] {
		t.Errorf("the replay does not end with the turn's last update:\nlive   %v\nreplay %v", live, replayed)
	}
	if !slices.Contains(replayed, userChunk(id, stPrompts[1])) {
		t.Errorf("the replay lacks the user's prompt: %v", replayed)
	}
	after := c.count()
	time.Sleep(50 * time.Millisecond) // anything sent after the reply would be by now
	if c.count() != after {
		t.Errorf("updates followed the load response: %v", c.since(after))
	}
	// Still the same live session: it goes on.
	if stop := e.promptStop(a, id, "again"); stop != acp.StopEndTurn {
		t.Errorf("prompt after load = %s", stop)
	}
}

// A session that was never prompted is saved from session/new: a fresh
// process loads and resumes it with the mode and model it had. It is not
// listed: a client opening one per chat would fill the picker with bare ids.
func TestUnpromptedSessionIsSaved(t *testing.T) {
	for _, how := range []string{"load", "resume"} {
		t.Run(how, func(t *testing.T) {
			e := newStEnv(t)
			models := func() Options {
				return Options{Models: []ModelChoice{
					{ID: "m/a", Name: "a", Provider: stScript(t)}, {ID: "m/b", Name: "b", Provider: stScript(t)}}}
			}
			a1, _ := e.agentWith(models(), acp.ClientCapabilities{})
			id := e.newSession(a1)
			s := a1.liveSession(t, id)
			if err := s.ctl.set(t.Context(), "mode", ModeBypass); err != nil { // as /mode bypass does
				t.Fatal(err)
			}
			if err := s.ctl.set(t.Context(), "model", "m/b"); err != nil {
				t.Fatal(err)
			}
			a1.Shutdown()

			a2, _ := e.agentWith(models(), acp.ClientCapabilities{})
			list, err := a2.ListSessions(t.Context(), &acp.ListSessionsRequest{})
			if err != nil || len(list.Sessions) != 0 {
				t.Fatalf("list = %+v, %v; want no unprompted session", list, err)
			}
			var modes *acp.SessionModeState
			var opts []acp.ConfigOption
			if how == "load" {
				r, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}})
				if err != nil {
					t.Fatal(err)
				}
				modes, opts = r.Modes, r.ConfigOptions
			} else {
				r, err := a2.ResumeSession(t.Context(), &acp.ResumeSessionRequest{SessionID: id, Cwd: e.cwd})
				if err != nil {
					t.Fatal(err)
				}
				modes, opts = r.Modes, r.ConfigOptions
			}
			model := ""
			for _, o := range opts {
				if o.ID == "model" {
					model, _ = o.CurrentValue.(string)
				}
			}
			if modes.CurrentModeID != ModeBypass || model != "m/b" {
				t.Errorf("%s: mode %s model %s, want bypass m/b", how, modes.CurrentModeID, model)
			}
		})
	}
}

// session/delete of a live session closes it as session/close does: its
// stdio MCP server is gone when the response comes.
func TestDeleteStopsMCPServers(t *testing.T) {
	e := newStEnv(t)
	a, _ := e.agent(nil, acp.ClientCapabilities{})
	srv, pidFile := stdioMCP(t, "local", mcptest.ModeStdio)
	r, err := a.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: e.cwd, McpServers: []acp.McpServer{srv}})
	if err != nil {
		t.Fatal(err)
	}
	pids := mcptest.PIDs(pidFile)
	if len(pids) == 0 {
		t.Fatal("the MCP server did not start")
	}
	if _, err := a.DeleteSession(t.Context(), &acp.DeleteSessionRequest{SessionID: r.SessionID}); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if mcptest.Alive(pid) {
			t.Errorf("server pid %d alive after session/delete", pid)
		}
	}
}

func (e *stEnv) promptStop(a *Agent, id, text string) acp.StopReason {
	e.t.Helper()
	r, err := a.Prompt(e.t.Context(), &acp.PromptRequest{SessionID: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	if err != nil {
		e.t.Fatal(err)
	}
	return r.StopReason
}

// agentWith is agent with more options: o's models, the env's store and clock.
func (e *stEnv) agentWith(o Options, caps acp.ClientCapabilities) (*Agent, *stClient) {
	e.t.Helper()
	a, c := e.agent(nil, caps)
	a.o.Models = o.Models
	a.models.Fixed = o.Models // the catalog New made from the options
	return a, c
}

// A command cancelled mid-run shows, after a reload, the output it printed
// before the cancel, as its live card did: the result stores it.
func TestReplayShowsACancelledCommandsOutput(t *testing.T) {
	caps := acp.ClientCapabilities{Meta: acp.Meta{"terminal_output": true}}
	e := newStEnv(t)
	e.tools = bash.Register
	a1, c1 := e.agent(stScript(t,
		`{"parts":[{"tool_call":{"id":"sh1","name":"bash","arguments":{"command":"echo started-work; sleep 30"}}}]}`), caps)
	id := e.newSession(a1)
	go func() {
		// The output, not the card's title: JSON writes its newline as \n.
		for !slices.ContainsFunc(c1.since(0), func(u string) bool { return strings.Contains(u, `started-work\n`) }) {
			time.Sleep(time.Millisecond)
		}
		a1.Cancel(t.Context(), &acp.CancelNotification{SessionID: id})
	}()
	if stop := e.promptStop(a1, id, "run it"); stop != acp.StopCancelled {
		t.Fatalf("stop = %s", stop)
	}
	a1.Shutdown()
	a2, c2 := e.agent(stScript(t), caps)
	if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	card := fold(t, content(c2.since(0))).Cards["sh1"]
	if card == nil || card.Status != "failed" || !strings.Contains(card.Terminal, "started-work") {
		t.Errorf("the cancelled command's card after replay: %+v", card)
	}
}
