package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/google/go-cmp/cmp"
)

// The cards a session shows that depend on display data stored at run time:
// a terminal whose output streamed live, and a diff of a change.
type shellArgs struct {
	Command string `json:"command"`
}

type shellOut struct {
	Output string `json:"output"`
	Exit   int    `json:"exit"`
}

type patchArgs struct {
	Path string `json:"path"`
}

type patchOut struct {
	Old string `json:"old"`
	New string `json:"new"`
}

func cardTools(r *registry.Registry) {
	registry.MustAdd(r, registry.Tool[shellArgs, shellOut]{
		Name: "shell", Description: "Run a command.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
		Run: func(_ context.Context, c *registry.Call, in shellArgs) (shellOut, error) {
			var out strings.Builder
			for _, l := range []string{"building…\n", "ok  \tpkg\t0.1s\n", "done\n"} {
				c.Output([]byte(l))
				out.WriteString(l)
			}
			return shellOut{Output: out.String(), Exit: 1}, nil
		},
		Render: func(_ shellArgs, o shellOut) []registry.Content { return []registry.Content{registry.Text(o.Output)} },
		Meta:   func(_ shellArgs, o shellOut) any { return o },
		PresentCall: func(in shellArgs) registry.View {
			return registry.TerminalCard{Command: in.Command, Description: "runs " + in.Command}
		},
		PresentResult: func(in shellArgs, r registry.Result) registry.View {
			var o shellOut
			if json.Unmarshal(r.Meta, &o) != nil {
				return nil
			}
			return registry.TerminalCard{Command: in.Command, Output: o.Output, ExitCode: &o.Exit}
		},
	})
	registry.MustAdd(r, registry.Tool[patchArgs, patchOut]{
		Name: "patch", Description: "Change a file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Run: func(context.Context, *registry.Call, patchArgs) (patchOut, error) {
			return patchOut{Old: "a\nb\n", New: "a\nB\n"}, nil
		},
		Render: func(in patchArgs, _ patchOut) []registry.Content {
			return []registry.Content{registry.Text("patched " + in.Path)}
		},
		Meta: func(_ patchArgs, o patchOut) any { return o },
		PresentCall: func(in patchArgs) registry.View {
			return registry.DiffCard{Title: "Patch " + in.Path, Locations: []registry.Location{{Path: in.Path}}}
		},
		PresentResult: func(in patchArgs, r registry.Result) registry.View {
			var o patchOut
			if json.Unmarshal(r.Meta, &o) != nil {
				return nil
			}
			return registry.DiffCard{Title: "Patch " + in.Path, Diffs: []registry.FileDiff{{Path: in.Path, OldText: &o.Old, NewText: o.New}},
				Locations: []registry.Location{{Path: in.Path, Line: 2}}}
		},
	})
}

// screen is what an editor shows after applying updates: the thread's
// entries in order, and each card's final state.
type screen struct {
	Entries []string
	Cards   map[string]*card
}

type card struct {
	Title, Kind, Status string
	Content, Locations  string
	RawInput, RawOutput string
	Terminal            string // output received through the _meta terminal convention
	Exit                string
}

func fold(t *testing.T, raw []string) screen {
	t.Helper()
	sc := screen{Cards: map[string]*card{}}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	text := func(kind, s string) {
		if n := len(sc.Entries); n > 0 && strings.HasPrefix(sc.Entries[n-1], kind+": ") {
			sc.Entries[n-1] += s
			return
		}
		sc.Entries = append(sc.Entries, kind+": "+s)
	}
	for _, u := range decodeUpdates(t, raw) {
		switch u := u.(type) {
		case *acp.UserMessageChunk:
			text("user", u.Content.Text)
		case *acp.AgentMessageChunk:
			text("agent", u.Content.Text)
		case *acp.AgentThoughtChunk:
			text("thought", u.Content.Text)
		case *acp.ToolCall:
			sc.Entries = append(sc.Entries, "card: "+u.ToolCallID)
			c := &card{Title: u.Title, Kind: string(u.Kind), Status: string(u.Status), Content: js(u.Content),
				Locations: js(u.Locations), RawInput: string(u.RawInput), RawOutput: string(u.RawOutput)}
			sc.Cards[u.ToolCallID] = c
			if ti, ok := u.Meta["terminal_info"]; ok {
				c.Terminal = "[" + js(ti) + "]"
			}
		case *acp.ToolCallUpdate:
			c := sc.Cards[u.ToolCallID]
			if c == nil {
				t.Fatalf("update for unknown card %s", u.ToolCallID)
			}
			if u.Status != nil {
				c.Status = string(*u.Status)
			}
			if u.Title != nil {
				c.Title = *u.Title
			}
			if u.Content != nil {
				c.Content = js(u.Content)
			}
			if u.Locations != nil {
				c.Locations = js(u.Locations)
			}
			if u.RawOutput != nil {
				c.RawOutput = string(u.RawOutput)
			}
			if o, ok := u.Meta["terminal_output"].(map[string]any); ok {
				c.Terminal += o["data"].(string)
			}
			if e, ok := u.Meta["terminal_exit"]; ok {
				c.Exit = js(e)
			}
		}
	}
	return sc
}

// TestReplayShowsTheSameCards: a session whose terminal output streamed live
// and whose change showed as a diff looks the same after a load, where the
// output and the diff come from what was stored, with no command run again.
func TestReplayShowsTheSameCards(t *testing.T) {
	for name, caps := range map[string]acp.ClientCapabilities{
		"plain client":           {},
		"terminal_output client": {Meta: acp.Meta{"terminal_output": true}},
	} {
		t.Run(name, func(t *testing.T) {
			e := newStEnv(t)
			e.tools = cardTools
			a1, c1 := e.agent(stScript(t,
				`{"parts":[{"text":"Building."},{"tool_call":{"id":"sh1","name":"shell","arguments":{"command":"go build ./..."}}},
					{"tool_call":{"id":"p1","name":"patch","arguments":{"path":"a.txt"}}}]}`,
				`{"parts":[{"text":"Built, and a.txt patched."}]}`), caps)
			id := e.newSession(a1)
			live := []string{userChunk(id, "build it")}
			live = append(live, content(e.prompt(a1, c1, id, "build it"))...)
			a1.Shutdown()

			a2, c2 := e.agent(stScript(t), caps)
			if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
				t.Fatal(err)
			}
			replay := content(c2.since(0))
			want, got := fold(t, live), fold(t, replay)
			if cmp.Diff(want.Entries, got.Entries) != "" {
				t.Errorf("entries\nlive   %q\nreplay %q", want.Entries, got.Entries)
			}
			for id, w := range want.Cards {
				if g := got.Cards[id]; g == nil || *g != *w {
					t.Errorf("card %s\nlive   %+v\nreplay %+v", id, *w, g)
				}
			}
			sh := got.Cards["sh1"]
			if sh == nil || sh.Status != "failed" || !strings.Contains(sh.Terminal, "ok  \tpkg") && !strings.Contains(sh.Content, `ok  \tpkg`) {
				t.Errorf("the terminal card after replay: %+v", sh)
			}
			if p := got.Cards["p1"]; p == nil || !strings.Contains(p.Content, `"oldText":"a\nb\n"`) {
				t.Errorf("the diff card after replay: %+v", p)
			}
		})
	}
}
