package agent

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/codemode"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var updateGolden = flag.Bool("update", false, "rewrite the screen section of agent/testdata/oldids.txtar")

// TestOldIDsLoad: a log written before call ids had one scheme (an
// endpoint's repeated ids with -N cards, "<parent>:code:<n>" sub-calls,
// /init's "init_<turn>", and a crash with a program and its sub-call open)
// loads and shows the same cards as it did (the screen section), and the
// session goes on with ids unique against the old ones: the model's
// "call_0" again gets a card of its own and reads its own id back.
func TestOldIDsLoad(t *testing.T) {
	const file = "testdata/oldids.txtar"
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	section := func(name string) string {
		for _, f := range ar.Files {
			if f.Name == name {
				return string(f.Data)
			}
		}
		t.Fatalf("%s has no %s section", file, name)
		return ""
	}
	e := newStEnv(t)
	if err := os.WriteFile(filepath.Join(e.dir, "old.jsonl"), []byte(strings.ReplaceAll(section("log.jsonl"), "$CWD", e.cwd)), 0o600); err != nil {
		t.Fatal(err)
	}
	m := &recorder{p: stScript(t,
		`{"parts":[{"tool_call":{"id":"call_0","name":"read","arguments":{"file_path":"b.txt"}}}]}`,
		`{"parts":[{"text":"Read."}]}`)}
	a, c := e.agent(m, acp.ClientCapabilities{})
	a.o.ToolsMode = codemode.ModeBoth
	if _, err := a.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: "old", Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	loaded := content(c.since(0))
	got := strings.ReplaceAll(renderScreen(t, loaded), e.cwd, "$CWD")
	if *updateGolden {
		for i := range ar.Files {
			if ar.Files[i].Name == "screen" {
				ar.Files[i].Data = []byte(got)
			}
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if d := cmp.Diff(section("screen"), got); d != "" {
		t.Errorf("the old log loads to another screen (-want +got):\n%s", d)
	}

	// The session goes on: the endpoint's "call_0" once more is a new card.
	n := c.count()
	if stop := e.promptStop(a, "old", "read b.txt"); stop != acp.StopEndTurn {
		t.Fatalf("stop = %s", stop)
	}
	sc := fold(t, content(c.since(n)))
	var cards []string
	for _, en := range sc.Entries {
		if id, ok := strings.CutPrefix(en, "card: "); ok {
			cards = append(cards, id)
		}
	}
	if want := []string{"call_0-5"}; !slices.Equal(cards, want) {
		t.Errorf("new cards %v, want %v (unique against the stored ids)", cards, want)
	}
	// /init's call takes the scheme's form for a call the agent makes.
	n = c.count()
	if stop := e.promptStop(a, "old", "/init"); stop != acp.StopEndTurn {
		t.Fatalf("stop = %s", stop)
	}
	if sc := fold(t, content(c.since(n))); sc.Cards["init"] == nil || sc.Cards["init"].Status != "completed" {
		t.Errorf("/init's card after the load: %v", sc.Entries)
	}
	var read []string
	for _, msg := range m.last() {
		if msg.Role == model.RoleTool {
			read = append(read, msg.ToolCallID)
		}
	}
	// Every call of the stored log is answered in the context (the sealed
	// program too), with the endpoint's own ids.
	if want := []string{"call_0", "call_0", "call_0", "call_0", "call_0"}; !slices.Equal(read, want) {
		t.Errorf("tool results the model reads: %v, want %v", read, want)
	}
}

// renderScreen is the thread an editor shows after the updates, as text:
// the entries in order, then each card's final state and its parent.
func renderScreen(t *testing.T, raw []string) string {
	t.Helper()
	sc := fold(t, raw)
	parents := map[string]string{}
	for _, u := range decodeUpdates(t, raw) {
		if tc, ok := u.(*acp.ToolCall); ok {
			if p, ok := tc.Meta["acp_bridge"].(map[string]any); ok {
				parents[tc.ToolCallID], _ = p["parentToolCallId"].(string)
			}
		}
	}
	var b strings.Builder
	for _, en := range sc.Entries {
		fmt.Fprintf(&b, "%q\n", en)
	}
	ids := make([]string, 0, len(sc.Cards))
	for id := range sc.Cards {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		c := sc.Cards[id]
		fmt.Fprintf(&b, "card %s parent=%q title=%q kind=%s status=%s\n  content=%s\n  rawOutput=%s\n", id, parents[id], c.Title, c.Kind, c.Status, c.Content, c.RawOutput)
	}
	return b.String()
}

// TestTopLevelIDs: the recorder gives a top-level call the id its maker
// wants unless the session, or an earlier call of the same step, has it.
func TestTopLevelIDs(t *testing.T) {
	for _, tt := range []struct {
		name         string
		taken, wants []string
		want         []string
	}{
		{"free", nil, []string{"call_1", "call_2"}, []string{"call_1", "call_2"}},
		{"repeated in a step", nil, []string{"call_0", "call_0", "call_0"}, []string{"call_0", "call_0-2", "call_0-3"}},
		{"used before", []string{"call_0", "call_0-2"}, []string{"call_0"}, []string{"call_0-3"}},
		{"a suffix the endpoint used", []string{"call_0"}, []string{"call_0-2", "call_0"}, []string{"call_0-2", "call_0-3"}},
		{"no id", nil, []string{"", ""}, []string{"-2", "-3"}},
		{"a command's call", []string{"init_2", "init"}, []string{"init"}, []string{"init-2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newCallRecorder(nil)
			r.taken = func(id string) bool { return slices.Contains(tt.taken, id) }
			if d := cmp.Diff(tt.want, r.ids(tt.wants...)); d != "" {
				t.Errorf("ids (-want +got):\n%s", d)
			}
		})
	}
}

// TestLoadDecodesPromptsOnce: the stored log's loop hands the fold and the
// translator each prompt decoded (session.WithBlocks), so neither decodes
// it again; the live path logs the blocks as received.
func TestLoadDecodesPromptsOnce(t *testing.T) {
	e := newStEnv(t)
	a1, c1 := e.agent(stScript(t, stResponses[1]), acp.ClientCapabilities{})
	id := e.newSession(a1)
	e.prompt(a1, c1, id, "hi")
	prompts := func(evs []session.Event) (n, decoded int) {
		for _, ev := range evs {
			if p, ok := ev.Payload.(session.UserMessage); ok {
				n++
				if p.Blocks != nil {
					decoded++
				}
			}
		}
		return n, decoded
	}
	if n, d := prompts(a1.liveSession(t, id).log.Events()); n != 1 || d != 1 {
		t.Errorf("live: %d prompts, %d with their blocks; want 1, 1", n, d)
	}
	a1.Shutdown()

	a2, _ := e.agent(stScript(t), acp.ClientCapabilities{})
	if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	s := a2.liveSession(t, id)
	if n, d := prompts(s.log.Events()); n != 1 || d != 0 {
		t.Fatalf("stored: %d prompts, %d with blocks; want 1, 0 (the log holds the stored form)", n, d)
	}
	var seen []session.Event
	s.emitMu.Lock()
	err := s.sendLog(t.Context(), func(ev session.Event) []acp.Update { seen = append(seen, ev); return nil }, 0)
	s.emitMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if n, d := prompts(seen); n != 1 || d != 1 {
		t.Errorf("the loop's step got %d prompts, %d decoded; want 1, 1", n, d)
	}
}
