package agent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/codemode"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

// rewindResponses are three turns, each changing files: the first creates
// new.txt, the second edits a.go, the third creates c.txt and edits new.txt.
var rewindResponses = []string{
	`{"parts":[{"tool_call":{"name":"write","arguments":{"file_path":"new.txt","content":"v1\n"}}}]}`,
	`{"parts":[{"text":"one done"}]}`,
	`{"parts":[{"tool_call":{"name":"read","arguments":{"file_path":"a.go"}}}]}`,
	`{"parts":[{"tool_call":{"name":"edit","arguments":{"file_path":"a.go","old_string":"func A() {}","new_string":"func A() { println() }"}}}]}`,
	`{"parts":[{"text":"two done"}]}`,
	`{"parts":[{"tool_call":{"name":"write","arguments":{"file_path":"c.txt","content":"c\n"}}},` +
		`{"tool_call":{"name":"read","arguments":{"file_path":"new.txt"}}}]}`,
	`{"parts":[{"tool_call":{"name":"edit","arguments":{"file_path":"new.txt","old_string":"v1","new_string":"v3"}}}]}`,
	`{"parts":[{"text":"three done"}]}`,
}

// threeTurns runs the three prompts of rewindResponses in a new session.
func threeTurns(t *testing.T, e *stEnv, p model.Provider, caps acp.ClientCapabilities) (*Agent, *stClient, string) {
	t.Helper()
	a, c := e.agent(p, caps)
	id := e.newSession(a)
	for _, p := range []string{"one", "two", "three"} {
		e.promptStop(a, id, p)
	}
	return a, c, id
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "<none>"
	} else if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// userIDs are the ids of the user messages in updates.
func userIDs(t *testing.T, updates []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, u := range updates {
		var n struct {
			Update struct {
				Kind      string          `json:"sessionUpdate"`
				MessageID string          `json:"messageId"`
				Content   json.RawMessage `json:"content"`
			} `json:"update"`
		}
		if err := json.Unmarshal([]byte(u), &n); err != nil {
			t.Fatal(err)
		}
		if n.Update.Kind == "user_message_chunk" {
			var b acp.ContentBlock
			if err := json.Unmarshal(n.Update.Content, &b); err != nil {
				t.Fatal(err)
			}
			out[b.Text] = n.Update.MessageID
		}
	}
	return out
}

// TestRewindCommand: /rewind 2 takes back the second and third prompts:
// the model's next request holds only the first turn, the files go back to
// how they were after the first prompt except one the user changed since,
// which is named, and a reload in a new process replays only the first
// turn and folds to the same state.
func TestRewindCommand(t *testing.T) {
	e := newStEnv(t)
	rec := &recorder{p: stScript(t, append(rewindResponses, `{"parts":[{"text":"after the rewind"}]}`)...)}
	a, c, id := threeTurns(t, e, rec, acp.ClientCapabilities{})
	turnOne := len(rec.requests()[1].Messages) // system, one, the write, its result
	if err := os.WriteFile(filepath.Join(e.cwd, "c.txt"), []byte("the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	n := c.count()
	e.promptStop(a, id, "/rewind")
	list := strings.Join(c.since(n), "\n")
	for _, want := range []string{`1. \"one\" (files changed after it: a.go, c.txt, new.txt)`, `2. \"two\" (files changed after it: a.go, c.txt, new.txt)`, `3. \"three\" (files changed after it: c.txt, new.txt)`} {
		if !strings.Contains(list, want) {
			t.Errorf("/rewind's list lacks %s:\n%s", want, list)
		}
	}

	n = c.count()
	e.promptStop(a, id, "/rewind 2")
	answer := strings.Join(c.since(n), "\n")
	for _, want := range []string{"Rewound to before prompt 2", "transcript still shows", "- a.go", "- new.txt", "- c.txt: it changed since the agent left it"} {
		if !strings.Contains(answer, want) {
			t.Errorf("the answer lacks %q:\n%s", want, answer)
		}
	}
	if got := readFile(t, filepath.Join(e.cwd, "a.go")); got != "package a\n\nfunc A() {}\n" {
		t.Errorf("a.go = %q, want it as before the second prompt", got)
	}
	if got := readFile(t, filepath.Join(e.cwd, "new.txt")); got != "v1\n" {
		t.Errorf("new.txt = %q, want it as the first prompt left it", got)
	}
	if got := readFile(t, filepath.Join(e.cwd, "c.txt")); got != "the user's\n" {
		t.Errorf("c.txt = %q, want the user's change kept", got)
	}

	e.promptStop(a, id, "four")
	reqs := rec.requests()
	got := reqs[len(reqs)-1].Messages
	if len(got) != turnOne+2 || got[len(got)-1].Content != "four" {
		t.Fatalf("the request after the rewind holds %d messages, want the first turn (%d) and the new prompt: %+v", len(got), turnOne+2, got)
	}
	// The first turn's messages are the same bytes: the prompt cache holds.
	first, _ := json.Marshal(reqs[2].Messages[:turnOne+1])
	again, _ := json.Marshal(got[:turnOne+1])
	if string(first) != string(again) {
		t.Errorf("the history before the rewound prompt changed:\nbefore %s\nafter  %s", first, again)
	}

	// The log folds to the live state, and a new process replays only
	// what is left.
	s := a.liveSession(t, id)
	_, stored, err := a.o.Store.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	folded := newState(a.defaultControls(), func(m string) bool { return a.models.Find(m) != nil })
	for _, ev := range stored {
		folded.apply(session.WithBlocks(ev))
	}
	s.mu.Lock()
	live := snapshot(s.st)
	s.mu.Unlock()
	if diff := cmp.Diff(live, snapshot(folded), stateOpts); diff != "" {
		t.Errorf("the fold of the stored log differs from the live state (-live +folded):\n%s", diff)
	}
	if _, err := a.CloseSession(t.Context(), &acp.CloseSessionRequest{SessionID: id}); err != nil {
		t.Fatal(err)
	}
	a2, c2 := e.agent(stScript(t), acp.ClientCapabilities{})
	if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	replayed := userIDs(t, c2.since(0))
	for _, p := range []string{"one", "/rewind 2", "four"} {
		if replayed[p] == "" {
			t.Errorf("the replay lacks the prompt %q (or its id): %v", p, replayed)
		}
	}
	for _, p := range []string{"two", "three", "/rewind"} { // the list came after "two"
		if _, ok := replayed[p]; ok {
			t.Errorf("the replay shows the rewound prompt %q", p)
		}
	}
	if all := strings.Join(c2.since(0), "\n"); strings.Contains(all, "two done") || strings.Contains(all, "three done") {
		t.Errorf("the replay shows a rewound answer:\n%s", all)
	}

	// A second rewind, to before the first prompt: new.txt was the
	// agent's (and put back by the first rewind, as the log says): it goes.
	n = c2.count()
	e.promptStop(a2, id, "/undo") // the last prompt: "four", which changed nothing
	if answer := strings.Join(c2.since(n), "\n"); !strings.Contains(answer, "Rewound to before prompt 2") || !strings.Contains(answer, "changed no files") {
		t.Errorf("/undo answered:\n%s", answer)
	}
	n = c2.count()
	e.promptStop(a2, id, "/rewind 1")
	if got := readFile(t, filepath.Join(e.cwd, "new.txt")); got != "<none>" {
		t.Errorf("new.txt = %q, want it removed (the agent created it)\n%s", got, strings.Join(c2.since(n), "\n"))
	}
}

// TestSessionRewind: `_session/rewind` as the AIR extension defines it:
// advertised to an AIR client only; a message found by id or by
// fingerprint and occurrence; -32602 naming an unknown one; busy while a
// turn runs; the conversation only, never the files.
func TestSessionRewind(t *testing.T) {
	e := newStEnv(t)
	air := acp.ClientCapabilities{Meta: acp.Meta{"jetbrains": map[string]any{"air": map[string]any{"version": float64(1), "capabilities": []any{}}}}}
	for _, caps := range []acp.ClientCapabilities{{}, air} {
		a, _ := e.agent(nil, caps)
		resp, err := a.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: caps})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(resp.Meta)
		if has := strings.Contains(string(b), `"sessionRewind"`); has != caps.AIR() {
			t.Errorf("AIR client %v: _meta %s", caps.AIR(), b)
		}
	}

	rec := &recorder{p: stScript(t, append(rewindResponses, `{"parts":[{"text":"again"}]}`)...)}
	a, _, id := threeTurns(t, e, rec, air)
	ids := userIDs(t, replayOf(t, a, id))

	// Errors first: they change nothing.
	if _, err := a.RewindSession(t.Context(), &acp.RewindSessionRequest{SessionID: id, BeforeMessage: &acp.HistoryPoint{MessageID: "user-999"}}); !isCode(err, acp.CodeInvalidParams) || !strings.Contains(err.Error(), "user-999") {
		t.Errorf("an unknown message: %v, want -32602 naming it", err)
	}
	if _, err := a.RewindSession(t.Context(), &acp.RewindSessionRequest{SessionID: id, BeforeMessage: &acp.HistoryPoint{MessageID: "x", Fingerprint: "md5:1"}}); !isCode(err, acp.CodeInvalidParams) {
		t.Errorf("a bad fingerprint: %v, want -32602", err)
	}
	if r, err := a.RewindSession(t.Context(), &acp.RewindSessionRequest{SessionID: "nope", BeforeMessage: &acp.HistoryPoint{MessageID: ids["two"]}}); err != nil || r.Rewound {
		t.Errorf("an unknown session: %+v, %v; want rewound false", r, err)
	}
	s := a.liveSession(t, id)
	s.mu.Lock()
	s.running = true // a turn runs
	s.mu.Unlock()
	if r, err := a.RewindSession(t.Context(), &acp.RewindSessionRequest{SessionID: id, BeforeMessage: &acp.HistoryPoint{MessageID: ids["two"]}}); err != nil || r.Rewound || r.Reason != "busy" {
		t.Errorf("while a turn runs: %+v, %v; want rewound false, busy", r, err)
	}
	s.mu.Lock()
	s.running = false
	s.mu.Unlock()

	// By fingerprint and occurrence, with an id the agent never gave (a
	// client that restored its view), and a segment suffix on a real one.
	point := &acp.HistoryPoint{MessageID: "gone", Fingerprint: fingerprint("three"), Occurrence: 1}
	if r, err := a.RewindSession(t.Context(), &acp.RewindSessionRequest{SessionID: id, BeforeMessage: point}); err != nil || !r.Rewound {
		t.Fatalf("by fingerprint: %+v, %v", r, err)
	}
	if r, err := a.RewindSession(t.Context(), &acp.RewindSessionRequest{SessionID: id, BeforeMessage: &acp.HistoryPoint{MessageID: ids["two"] + ":segment:2"}}); err != nil || !r.Rewound {
		t.Fatalf("by id: %+v, %v", r, err)
	}
	if _, err := a.RewindSession(t.Context(), &acp.RewindSessionRequest{SessionID: id, BeforeMessage: &acp.HistoryPoint{MessageID: ids["three"]}}); !isCode(err, acp.CodeInvalidParams) {
		t.Errorf("a message already rewound: %v, want -32602", err)
	}
	if got := readFile(t, filepath.Join(e.cwd, "a.go")); !strings.Contains(got, "println") {
		t.Errorf("_session/rewind touched the files: a.go = %q", got)
	}
	e.promptStop(a, id, "again")
	reqs := rec.requests()
	if got := reqs[len(reqs)-1].Messages; len(got) != len(reqs[1].Messages)+2 {
		t.Errorf("the next request holds %d messages, want the first turn and the prompt", len(got))
	}

	// The files, separately: a dry run says, the real one does.
	dry, err := a.RewindFiles(t.Context(), &acp.RewindFilesRequest{SessionID: id, BeforeMessage: &acp.HistoryPoint{MessageID: ids["one"]}, DryRun: true})
	if err != nil || !dry.CanRewind || len(dry.Restored) != 3 {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	if got := readFile(t, filepath.Join(e.cwd, "c.txt")); got != "c\n" {
		t.Errorf("the dry run changed c.txt: %q", got)
	}
}

// replayOf is what session/load of a live session replays.
func replayOf(t *testing.T, a *Agent, id string) []string {
	t.Helper()
	c := &stClient{}
	s := a.liveSession(t, id)
	saved := s.client
	s.client = c
	defer func() { s.client = saved }()
	if err := s.replay(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	return c.since(0)
}

func isCode(err error, code int) bool {
	var ae *acp.Error
	return errors.As(err, &ae) && ae.Code == code
}

// TestRewindUndoesProgramsAndSubagents: the files a Code Mode program's
// sub-call and a subagent's call wrote are the agent's own: /rewind takes
// them back like a direct call's.
func TestRewindUndoesProgramsAndSubagents(t *testing.T) {
	reg := registry.New()
	fs.Register(reg)
	program := `await tools.write({file_path: "p.txt", content: "p\n"}); return "ok"`
	m := scriptOf(t,
		[]map[string]any{toolCallPart(t, "c1", "run_code", map[string]any{"code": program, "description": "Write p"})},
		[]map[string]any{{"text": "Wrote p."}},
		[]map[string]any{toolCallPart(t, "c2", "task", map[string]any{"profile": "general", "prompt": "write q", "description": "Write q"})},
		[]map[string]any{toolCallPart(t, "s1", "write", map[string]any{"file_path": "q.txt", "content": "q\n"})},
		[]map[string]any{{"text": "made q"}},
		[]map[string]any{{"text": "Done."}},
	)
	e := newEditor(t, Options{Registry: reg, Model: m, ToolsMode: codemode.ModeBoth, UserInstructionsDir: "-", UserProfilesDir: "-"})
	dir := t.TempDir()
	sid := e.newSession(dir)
	for _, p := range []string{"program", "subagent"} {
		if stop, err := e.prompt(sid, p); err != nil || stop != acp.StopEndTurn {
			t.Fatalf("%s: %v, %v", p, stop, err)
		}
	}
	for _, f := range []string{"p.txt", "q.txt"} {
		if readFile(t, filepath.Join(dir, f)) == "<none>" {
			t.Fatalf("%s was not written", f)
		}
	}
	n := len(e.updates())
	if _, err := e.prompt(sid, "/rewind 1"); err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	for _, u := range e.updates()[n:] {
		if c, ok := u.(*acp.AgentMessageChunk); ok {
			said.WriteString(c.Content.Text)
		}
	}
	for _, f := range []string{"p.txt", "q.txt"} {
		if got := readFile(t, filepath.Join(dir, f)); got != "<none>" {
			t.Errorf("%s = %q, want it removed:\n%s", f, got, said.String())
		}
	}
}

// pointAt is how both rewinds (before a prompt; v2's to a message, and a
// fork at one) find the message a client names: the cases are the ways a
// point can name one, and the ones that name none.
func TestPointAt(t *testing.T) {
	user := func(text string) *session.UserMessage { return &session.UserMessage{Text: text} }
	msgs := []sentMessage{
		{id: "u1", user: user("same")},
		{id: "a1"},
		{id: "u2", user: user("other")},
		{id: "u3", user: user("same")},
		{id: "a3"},
	}
	tests := []struct {
		name  string
		point acp.HistoryPoint
		want  int
	}{
		{"by id", acp.HistoryPoint{MessageID: "u2"}, 2},
		{"an agent's message by id", acp.HistoryPoint{MessageID: "a3"}, 4},
		{"a segment of a message", acp.HistoryPoint{MessageID: "a1:segment:3"}, 1},
		{"the id wins over the fingerprint", acp.HistoryPoint{MessageID: "u2", Fingerprint: fingerprint("same")}, 2},
		{"by fingerprint, the first", acp.HistoryPoint{MessageID: "gone", Fingerprint: fingerprint("same")}, 0},
		{"by fingerprint, the second", acp.HistoryPoint{MessageID: "gone", Fingerprint: fingerprint("same"), Occurrence: 2}, 3},
		{"by fingerprint, no third", acp.HistoryPoint{Fingerprint: fingerprint("same"), Occurrence: 3}, -1},
		{"an unknown id", acp.HistoryPoint{MessageID: "gone"}, -1},
		{"no id", acp.HistoryPoint{}, -1},
		{"only a segment suffix", acp.HistoryPoint{MessageID: ":segment:1"}, -1},
		{"a fingerprint nothing has", acp.HistoryPoint{Fingerprint: fingerprint("none")}, -1},
	}
	for _, tt := range tests {
		if got := pointAt(msgs, &tt.point, sentMessage.messageID, sentMessage.userMessage); got != tt.want {
			t.Errorf("%s: pointAt = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// relOne names a file in /rewind's report relative to the session's cwd
// when it is inside it: a name that only starts with two dots is inside.
func TestRelOne(t *testing.T) {
	cwd := filepath.Join(t.TempDir(), "work")
	r := &rewinder{cwd: cwd}
	outside := filepath.Join(filepath.Dir(cwd), "other", "f.go")
	tests := []struct{ path, want string }{
		{filepath.Join(cwd, "a", "b.go"), filepath.Join("a", "b.go")},
		{filepath.Join(cwd, "..foo"), "..foo"},
		{filepath.Join(cwd, "..foo", "..bar"), filepath.Join("..foo", "..bar")},
		{filepath.Join(cwd, "...", "x"), filepath.Join("...", "x")},
		{cwd, "."},
		{outside, outside},
		{filepath.Dir(cwd), filepath.Dir(cwd)},
		{filepath.Join(filepath.Dir(cwd), "..foo"), filepath.Join(filepath.Dir(cwd), "..foo")},
	}
	for _, tt := range tests {
		if got := r.relOne(tt.path); got != tt.want {
			t.Errorf("relOne(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
