package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/tools/fs"
	"github.com/google/go-cmp/cmp"
)

// stClient is an in-memory editor: it records every session/update as the
// JSON the wire would carry, and allows every permission request once.
type stClient struct {
	mu      sync.Mutex
	updates []string
}

func (c *stClient) SessionUpdate(_ context.Context, id string, u acp.Update) error {
	b, err := json.Marshal(acp.SessionNotification{SessionID: id, Update: u})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.updates = append(c.updates, string(b))
	c.mu.Unlock()
	return nil
}

func (c *stClient) RequestPermission(context.Context, *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return &acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: "allow-once"}}, nil
}

func (c *stClient) ReadTextFile(context.Context, *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	return nil, errors.New("the test client serves no files")
}

func (c *stClient) WriteTextFile(context.Context, *acp.WriteTextFileRequest) error {
	return errors.New("the test client serves no files")
}

func (c *stClient) since(n int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.updates[n:])
}

func (c *stClient) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.updates)
}

// stClock is one fake clock shared by the agent and the store, so event
// times and list order are deterministic.
func stClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

type stEnv struct {
	t     *testing.T
	dir   string // state directory
	cwd   string // workspace
	clock func() time.Time
	tools func(*registry.Registry) // extra tools, besides the fs ones
}

func newStEnv(t *testing.T) *stEnv {
	t.Helper()
	cwd := t.TempDir()
	for name, body := range map[string]string{"a.go": "package a\n\nfunc A() {}\n", "b.txt": "notes\n"} {
		if err := os.WriteFile(filepath.Join(cwd, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &stEnv{t: t, dir: t.TempDir(), cwd: cwd, clock: stClock()}
}

// agent starts a fresh agent (a new process, as far as sessions go) on the
// env's state directory.
func (e *stEnv) agent(p model.Provider, caps acp.ClientCapabilities) (*Agent, *stClient) {
	e.t.Helper()
	st, err := session.OpenStore(e.dir, &session.StoreOptions{Now: e.clock})
	if err != nil {
		e.t.Fatal(err)
	}
	reg := registry.New()
	fs.Register(reg)
	if e.tools != nil {
		e.tools(reg)
	}
	c := &stClient{}
	ids := 0
	a := New(c, Options{Registry: reg, Model: p, Store: st, Now: e.clock, ListPageSize: 2,
		NewID: func() string { ids++; return fmt.Sprintf("s%d-%d", ids, time.Now().UnixNano()) }})
	if _, err := a.Initialize(e.t.Context(), &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: caps}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(a.Shutdown)
	return a, c
}

func (e *stEnv) newSession(a *Agent) string {
	e.t.Helper()
	r, err := a.NewSession(e.t.Context(), &acp.NewSessionRequest{Cwd: e.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		e.t.Fatal(err)
	}
	return r.SessionID
}

func stScript(t *testing.T, responses ...string) *model.Script {
	t.Helper()
	s, err := model.ParseScript([]byte(`{"responses":[` + strings.Join(responses, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A conversation that touches every kind of event a session logs: thoughts,
// text, several calls in one response, a call alone in a response, a failing
// call, a cancelled turn, a failed model request.
var (
	stPrompts   = []string{"What does a.go do?", "And b.txt?", "Write a long essay.", "Try again.", "Thanks."}
	stResponses = []string{
		`{"parts":[{"thought":"Look first."},{"text":"Reading both."},
			{"tool_call":{"id":"t1a","name":"read","arguments":{"file_path":"a.go"}}},
			{"tool_call":{"id":"t1b","name":"read","arguments":{"file_path": "missing.txt"}}}]}`,
		`{"parts":[{"text":"a.go declares A; missing.txt does not exist."}]}`,
		`{"parts":[{"tool_call":{"id":"t2a","name":"read","arguments":{"file_path":"b.txt","offset":1,"limit":1}}}]}`,
		`{"parts":[{"text":"b.txt holds notes."}]}`,
		`{"parts":[{"text":"Once upon "},{"delay_ms":20000},{"text":"a time."}]}`,
		`{"parts":[{"text":"Half"},{"error":"connection reset"}]}`,
		`{"parts":[{"thought":"They are done."},{"text":"You're welcome."}]}`,
	}
)

// prompt runs one turn; the third (the essay) is cancelled once its first
// words are on screen.
func (e *stEnv) prompt(a *Agent, c *stClient, id, text string) []string {
	e.t.Helper()
	n := c.count()
	if text == stPrompts[2] {
		go func() {
			for !slices.ContainsFunc(c.since(n), func(u string) bool { return strings.Contains(u, "Once") }) {
				time.Sleep(time.Millisecond)
			}
			a.Cancel(context.Background(), &acp.CancelNotification{SessionID: id})
		}()
	}
	_, err := a.Prompt(e.t.Context(), &acp.PromptRequest{SessionID: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	if err != nil && !(text == stPrompts[3] && strings.Contains(err.Error(), "connection reset")) {
		e.t.Fatal(err) // only the failed model request of "Try again." fails the prompt
	}
	return c.since(n)
}

// content drops the updates that announce the agent's current offer
// (available commands) rather than what happened in the session: they are
// sent after session/new and session/load alike, and are not history.
// content is what a thread shows of updates: without the command
// catalog, and with the user's messages as the client sent them (live, the
// client has no id for them; a replay names each: TestMessageIDs).
func content(us []string) []string {
	out := slices.DeleteFunc(slices.Clone(us), func(u string) bool {
		return strings.Contains(u, `"sessionUpdate":"available_commands_update"`)
	})
	for i, u := range out {
		if strings.Contains(u, `"sessionUpdate":"user_message_chunk"`) {
			out[i] = userID.ReplaceAllString(u, "")
		}
	}
	return out
}

var userID = regexp.MustCompile(`,"messageId":"user-\d+"`)

func userChunk(id, text string) string {
	b, _ := json.Marshal(acp.SessionNotification{SessionID: id, Update: acp.UserMessageChunk{Content: acp.TextBlock(text)}})
	return string(b)
}

func (s *conversation) turnCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.turns
}

func (a *Agent) liveSession(t *testing.T, id string) *conversation {
	t.Helper()
	s, err := a.session(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReplayEqualsLive: a loaded session shows the editor exactly what it
// saw live, turn by turn, preceded by the user's own messages; and the
// model's context is rebuilt exactly.
func TestReplayEqualsLive(t *testing.T) {
	for _, caps := range []struct {
		name string
		caps acp.ClientCapabilities
	}{
		{"plain client", acp.ClientCapabilities{}},
		{"terminal_output client", acp.ClientCapabilities{Meta: acp.Meta{"terminal_output": true}}},
	} {
		t.Run(caps.name, func(t *testing.T) {
			e := newStEnv(t)
			a1, c1 := e.agent(stScript(t, stResponses...), caps.caps)
			created, err := a1.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: e.cwd, McpServers: []acp.McpServer{}})
			if err != nil {
				t.Fatal(err)
			}
			id := created.SessionID
			var want []string
			for _, p := range stPrompts {
				live := e.prompt(a1, c1, id, p)
				want = append(want, userChunk(id, p))
				want = append(want, content(live)...)
			}
			s1 := a1.liveSession(t, id)
			liveHistory, liveTurns := s1.history(), s1.turnCount()
			if _, err := a1.CloseSession(t.Context(), &acp.CloseSessionRequest{SessionID: id}); err != nil {
				t.Fatal(err)
			}

			a2, c2 := e.agent(stScript(t), caps.caps) // configured like the first, with a model
			resp, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}})
			if err != nil {
				t.Fatal(err)
			}
			// The session never changed its modes or options: it comes back
			// with the ones it was created with.
			gotState, _ := json.Marshal(acp.NewSessionResponse{Modes: resp.Modes, ConfigOptions: resp.ConfigOptions})
			wantState, _ := json.Marshal(acp.NewSessionResponse{Modes: created.Modes, ConfigOptions: created.ConfigOptions})
			if string(gotState) != string(wantState) {
				t.Errorf("load restored modes and options %s, want %s", gotState, wantState)
			}
			got := content(c2.since(0))
			if !slices.Equal(got, want) {
				t.Errorf("replay differs from live (-live +replay):\n%s", lineDiff(want, got))
			}
			s2 := a2.liveSession(t, id)
			if cmp.Diff(s2.history(), liveHistory) != "" {
				t.Errorf("rebuilt history differs:\nlive    %+v\nrebuilt %+v", liveHistory, s2.history())
			}
			if s2.turnCount() != liveTurns {
				t.Errorf("turns = %d, want %d", s2.turnCount(), liveTurns)
			}
		})
	}
}

// lineDiff shows where two update sequences part.
func lineDiff(want, got []string) string {
	var b strings.Builder
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			fmt.Fprintf(&b, "%d:\n- %s\n+ %s\n", i, w, g)
		}
	}
	return b.String()
}

// TestLoadedSessionContinues: after a load (or resume) in a fresh agent, the
// model is sent exactly the conversation a never-restarted agent sends it.
func TestLoadedSessionContinues(t *testing.T) {
	for _, how := range []string{"load", "resume"} {
		t.Run(how, func(t *testing.T) {
			e := newStEnv(t)
			// The reference: one agent, every turn.
			ref := &recorder{p: stScript(t, stResponses...)}
			a0, c0 := e.agent(ref, acp.ClientCapabilities{})
			id0 := e.newSession(a0)
			for _, p := range stPrompts {
				e.prompt(a0, c0, id0, p)
			}

			// The same turns split over two agents, joined by the log.
			split := 4 // prompts before the restart; responses used by then: 6
			a1, c1 := e.agent(stScript(t, stResponses[:6]...), acp.ClientCapabilities{})
			id := e.newSession(a1)
			for _, p := range stPrompts[:split] {
				e.prompt(a1, c1, id, p)
			}
			a1.Shutdown()
			rec := &recorder{p: stScript(t, stResponses[6:]...)}
			a2, c2 := e.agent(rec, acp.ClientCapabilities{})
			var err error
			if how == "load" {
				_, err = a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}})
			} else {
				_, err = a2.ResumeSession(t.Context(), &acp.ResumeSessionRequest{SessionID: id, Cwd: e.cwd})
				if n := len(content(c2.since(0))); n != 0 {
					t.Errorf("resume sent %d updates; it must not replay", n)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			e.prompt(a2, c2, id, stPrompts[split])
			if len(rec.reqs) != 1 || len(ref.reqs) != 7 {
				t.Fatalf("requests: %d after the restart, %d in the reference", len(rec.reqs), len(ref.reqs))
			}
			if want, got := ref.reqs[6].Messages, rec.reqs[0].Messages; cmp.Diff(want, got) != "" {
				t.Errorf("the model got a different conversation after %s:\nwant %+v\n got %+v", how, want, got)
			}
			s := a2.liveSession(t, id)
			if s.turnCount() != len(stPrompts) {
				t.Errorf("turn counter = %d, want %d", s.turnCount(), len(stPrompts))
			}
		})
	}
}

// writeLog writes a session log by hand, as a crashed process left it.
func (e *stEnv) writeLog(id string, evs ...session.Event) {
	e.t.Helper()
	st, err := session.OpenStore(e.dir, &session.StoreOptions{Now: e.clock})
	if err != nil {
		e.t.Fatal(err)
	}
	lg, err := st.Create(session.Header{ID: id, Cwd: e.cwd})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, ev := range evs {
		lg.Append(ev)
	}
	lg.Close()
}

func decodeUpdates(t *testing.T, raw []string) []acp.Update {
	t.Helper()
	var out []acp.Update
	for _, r := range raw {
		var n acp.SessionNotification
		if err := json.Unmarshal([]byte(r), &n); err != nil {
			t.Fatalf("%v: %s", err, r)
		}
		out = append(out, n.Update)
	}
	return out
}

// finalStatus folds the updates into each card's last status.
func finalStatus(us []acp.Update) map[string]acp.ToolCallStatus {
	st := map[string]acp.ToolCallStatus{}
	for _, u := range us {
		switch u := u.(type) {
		case *acp.ToolCall:
			st[u.ToolCallID] = u.Status
		case *acp.ToolCallUpdate:
			if u.Status != nil {
				st[u.ToolCallID] = *u.Status
			}
		}
	}
	return st
}

// TestLoadFailsInterruptedCalls: a log cut off mid-turn (the process was
// killed while a tool ran) loads with every call given a final failed
// update, the turn closed, and the model's context answering every call.
func TestLoadFailsInterruptedCalls(t *testing.T) {
	e := newStEnv(t)
	args := `{"file_path":"a.go"}`
	e.writeLog("crashed",
		session.New(session.UserMessage{Prompt: json.RawMessage(`[{"type":"text","text":"go"}]`), Text: "go"}),
		session.New(session.TurnStart{Turn: 1}),
		session.New(session.AssistantChunk{Kind: "text", Text: "Reading."}),
		session.New(session.AssistantMessage{Text: "Reading.", ToolCalls: []session.MessageCall{
			{ID: "c1", Name: "read", Arguments: json.RawMessage(args)}, {ID: "c2", Name: "read", Arguments: json.RawMessage(`{"file_path": "b.txt"}`)}}}),
		session.New(session.ToolCall{CallID: "c1", Name: "read", Args: json.RawMessage(args)}),
		session.New(session.ToolStatus{CallID: "c1", Status: "running"}),
	)
	a, c := e.agent(nil, acp.ClientCapabilities{})
	if _, err := a.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: "crashed", Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	us := decodeUpdates(t, c.since(0))
	if got := finalStatus(us); got["c1"] != acp.StatusFailed || got["c2"] != acp.StatusFailed {
		t.Errorf("final statuses = %v, want c1 and c2 failed", got)
	}
	var sawRunning, sawCard2 bool
	for _, u := range us {
		if tu, ok := u.(*acp.ToolCallUpdate); ok && tu.ToolCallID == "c1" && tu.Status != nil && *tu.Status == acp.StatusInProgress {
			sawRunning = true
		}
		if tc, ok := u.(*acp.ToolCall); ok && tc.ToolCallID == "c2" {
			sawCard2 = true
		}
	}
	if !sawRunning || !sawCard2 {
		t.Errorf("replay lost what happened: c1 in_progress seen %v, c2 card seen %v", sawRunning, sawCard2)
	}
	s := a.liveSession(t, "crashed")
	var answered []string
	for _, m := range s.history() {
		if m.Role == model.RoleTool {
			answered = append(answered, m.ToolCallID)
			if !strings.Contains(m.Content, "acp-bridge stopped") {
				t.Errorf("the model is told %q for %s", m.Content, m.ToolCallID)
			}
		}
	}
	if !slices.Equal(answered, []string{"c1", "c2"}) {
		t.Errorf("calls answered in the context: %v, want [c1 c2]", answered)
	}
	evs := s.log.Events()
	if last := evs[len(evs)-1]; last.Type() != session.TypeTurnEnd {
		t.Errorf("the open turn was not closed: last event %s", last.Type())
	}
	n := len(evs)

	// Sealed once: a second load adds nothing and shows the same.
	a.Shutdown()
	a2, c2 := e.agent(nil, acp.ClientCapabilities{})
	if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: "crashed", Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if got := len(a2.liveSession(t, "crashed").log.Events()); got != n {
		t.Errorf("second load: %d events, want %d", got, n)
	}
	if !slices.Equal(c2.since(0), c.since(0)) {
		t.Errorf("second load replays differently")
	}
}

func TestLoadRefusals(t *testing.T) {
	e := newStEnv(t)
	a, _ := e.agent(stScript(t, stResponses[1]), acp.ClientCapabilities{})
	live := e.newSession(a)
	a.Prompt(t.Context(), &acp.PromptRequest{SessionID: live, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
	e.writeLog("stored", session.New(session.Notice{Text: "x"}))
	writeRaw := func(id string, lines ...string) {
		body := fmt.Sprintf(`{"type":"session","version":1,"id":%q,"cwd":%q,"created":"2026-03-01T09:00:00Z"}`, id, e.cwd) + "\n" + strings.Join(lines, "\n") + "\n"
		if err := os.WriteFile(filepath.Join(e.dir, id+".jsonl"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.dir, "badheader.jsonl"), []byte("{\"type\":\"other\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = writeRaw

	// Another process holding the log open.
	other, err := session.OpenStore(e.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.writeLog("elsewhere", session.New(session.Notice{Text: "x"}))
	held, _, err := other.Open("elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	tests := []struct {
		name, id, cwd string
		code          int
		msg           string
	}{
		{"not stored", "nosuch", e.cwd, acp.CodeResourceNotFound, "session not found"},
		{"id that is a path", "../etc/passwd", e.cwd, acp.CodeResourceNotFound, "session not found"},
		{"other cwd", "stored", "/elsewhere", acp.CodeInvalidParams, "belongs to " + e.cwd},
		{"relative cwd", "stored", "work", acp.CodeInvalidParams, "absolute"},
		{"corrupt header", "badheader", e.cwd, acp.CodeInternalError, "not a session header"},
		{"held by another process", "elsewhere", e.cwd, acp.CodeInvalidParams, "another acp-bridge process"},
	}
	for _, tc := range tests {
		for _, method := range []string{"load", "resume"} {
			t.Run(tc.name+"/"+method, func(t *testing.T) {
				var err error
				if method == "load" {
					_, err = a.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: tc.id, Cwd: tc.cwd, McpServers: []acp.McpServer{}})
				} else {
					_, err = a.ResumeSession(t.Context(), &acp.ResumeSessionRequest{SessionID: tc.id, Cwd: tc.cwd})
				}
				if tc.name == "already live" {
					if err != nil {
						t.Errorf("%s of a live session = %v, want success", method, err)
					}
					return
				}
				var ae *acp.Error
				if !errors.As(err, &ae) || ae.Code != tc.code || !strings.Contains(ae.Message, tc.msg) {
					t.Errorf("err = %v, want code %d containing %q", err, tc.code, tc.msg)
				}
			})
		}
	}
	// None of that hurt the agent or left a session half-registered.
	if _, err := a.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: "stored", Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Errorf("a good load after the refusals: %v", err)
	}
	a.mu.Lock()
	n := len(a.sessions)
	a.mu.Unlock()
	if n != 2 {
		t.Errorf("%d live sessions, want 2 (the new one and the loaded one)", n)
	}
}

// TestLoadSkipsDamagedLines: a line that cannot be used (damaged, or of an
// event type this build does not know) costs that line only: the rest
// loads and replays, the editor is told which lines were left out, and the
// file is not changed.
func TestLoadSkipsDamagedLines(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string // in the notice
	}{
		{"unknown event type", []string{`{"seq":1,"time":"2026-03-01T09:00:01Z","type":"hologram/projected","data":{}}`,
			`{"seq":2,"time":"2026-03-01T09:00:02Z","type":"notice","data":{"text":"kept"}}`}, []string{"hologram/projected", "line 2"}},
		{"garbage mid-log and a damaged last line", []string{`{"seq":1,"time":"2026-03-01T09:00:01Z","type":"notice","data":{"text":"kept"}}`, `}{`,
			`{"seq":3,"time":"2026-03-01T09:00:03Z","type":"notice","data":{"text":"kept too"}}`, `{"seq":4,"time":"2026-03-01T09:00:04Z","type":"turn/start","data":{"turn":"one"}}`},
			[]string{"2 damaged lines", "line 3", "line 5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newStEnv(t)
			a, c := e.agent(nil, acp.ClientCapabilities{})
			body := fmt.Sprintf(`{"type":"session","version":1,"id":"d","cwd":%q,"created":"2026-03-01T09:00:00Z"}`, e.cwd) + "\n" + strings.Join(tt.lines, "\n") + "\n"
			p := filepath.Join(e.dir, "d.jsonl")
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := a.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: "d", Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
				t.Fatalf("load: %v", err)
			}
			var sent strings.Builder
			for _, u := range c.since(0) {
				b, _ := json.Marshal(u)
				sent.Write(b)
			}
			for _, w := range append([]string{"kept", "left out"}, tt.want...) {
				if !strings.Contains(sent.String(), w) {
					t.Errorf("the editor was not sent %q: %s", w, sent.String())
				}
			}
			if got, _ := os.ReadFile(p); !bytes.HasPrefix(got, []byte(body)) {
				t.Errorf("the load changed the stored lines:\n%s", got)
			}
		})
	}
}

func TestListSessions(t *testing.T) {
	e := newStEnv(t)
	other := t.TempDir()
	a, _ := e.agent(nil, acp.ClientCapabilities{})
	mk := func(cwd, prompt string) string {
		r, err := a.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		if prompt != "" {
			a.Prompt(t.Context(), &acp.PromptRequest{SessionID: r.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}})
		}
		return r.SessionID
	}
	first := mk(e.cwd, "first question")
	empty := mk(e.cwd, "") // never prompted: not listed (it still loads)
	elsewhere := mk(other, "in the other project")
	second := mk(e.cwd, "second question\nwith details")
	third := mk(e.cwd, "third")

	page := func(cwd, cursor string) *acp.ListSessionsResponse {
		t.Helper()
		r, err := a.ListSessions(t.Context(), &acp.ListSessionsRequest{Cwd: cwd, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var ids, titles []string
	cursor, pages := "", 0
	for {
		r := page(e.cwd, cursor)
		pages++
		for _, s := range r.Sessions {
			ids = append(ids, s.SessionID)
			titles = append(titles, s.Title)
			if s.Cwd != e.cwd {
				t.Errorf("%s listed with cwd %s", s.SessionID, s.Cwd)
			}
			if _, err := time.Parse(time.RFC3339, s.UpdatedAt); err != nil {
				t.Errorf("updatedAt %q is not RFC 3339: %v", s.UpdatedAt, err)
			}
		}
		if cursor = r.NextCursor; cursor == "" {
			break
		}
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
	}
	if want := []string{third, second, first}; !slices.Equal(ids, want) {
		t.Errorf("listed %v, want %v (newest first, other cwd and the unprompted one left out)", ids, want)
	}
	if want := []string{"third", "second question", "first question"}; !slices.Equal(titles, want) {
		t.Errorf("titles %q, want %q", titles, want)
	}
	if pages != 2 {
		t.Errorf("%d pages of size 2 for 3 sessions", pages)
	}
	if _, err := a.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: empty, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Errorf("the unlisted unprompted session does not load: %v", err)
	}
	all := page("", "")
	if len(all.Sessions) != 2 || all.Sessions[0].SessionID != third || all.Sessions[1].SessionID != second {
		t.Errorf("unfiltered first page = %+v", all.Sessions)
	}
	rest := page("", all.NextCursor)
	if len(rest.Sessions) != 2 || rest.Sessions[0].SessionID != elsewhere || rest.Sessions[1].SessionID != first || rest.NextCursor != "" {
		t.Errorf("unfiltered second page = %+v, next %q", rest.Sessions, rest.NextCursor)
	}
	for _, bad := range []string{"not-base64!", "e30", "bm9wZQ"} {
		_, err := a.ListSessions(t.Context(), &acp.ListSessionsRequest{Cursor: bad})
		var ae *acp.Error
		if !errors.As(err, &ae) || ae.Code != acp.CodeInvalidParams {
			t.Errorf("cursor %q: err = %v, want invalid params", bad, err)
		}
	}
}

func TestDeleteAndClose(t *testing.T) {
	e := newStEnv(t)
	a, _ := e.agent(nil, acp.ClientCapabilities{})
	prompted := func() string {
		id := e.newSession(a)
		a.Prompt(t.Context(), &acp.PromptRequest{SessionID: id, Prompt: []acp.ContentBlock{acp.TextBlock("hello")}})
		return id
	}
	exists := func(id string) bool {
		_, err := os.Stat(filepath.Join(e.dir, id+".jsonl"))
		return err == nil
	}

	// Closing keeps every session's log: one never prompted still has its
	// controls, and loads with them.
	kept, empty := prompted(), e.newSession(a)
	for _, id := range []string{kept, empty} {
		if _, err := a.CloseSession(t.Context(), &acp.CloseSessionRequest{SessionID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if !exists(kept) || !exists(empty) {
		t.Errorf("after close: prompted log exists %v, empty log exists %v (want both)", exists(kept), exists(empty))
	}

	// Deleting a stored session, and a live one (closed first).
	live := prompted()
	for _, id := range []string{kept, live} {
		if _, err := a.DeleteSession(t.Context(), &acp.DeleteSessionRequest{SessionID: id}); err != nil {
			t.Fatalf("delete %s: %v", id, err)
		}
		if exists(id) {
			t.Errorf("%s still on disk after delete", id)
		}
	}
	if _, err := a.session(live); err == nil {
		t.Error("a deleted live session is still live")
	}
	// An id with no session is deleted already: that succeeds (the spec's
	// SHOULD), for a deleted one, one never known and one no file can have.
	for _, id := range []string{kept, "never-was", "../etc/passwd"} {
		if _, err := a.DeleteSession(t.Context(), &acp.DeleteSessionRequest{SessionID: id}); err != nil {
			t.Errorf("delete of %q with no session = %v, want success", id, err)
		}
	}
	var ae *acp.Error
	_, err := a.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: kept, Cwd: e.cwd, McpServers: []acp.McpServer{}})
	if !errors.As(err, &ae) || ae.Code != acp.CodeResourceNotFound {
		t.Errorf("load after delete = %v, want not found", err)
	}
}

func TestCapabilitiesFollowTheStore(t *testing.T) {
	e := newStEnv(t)
	withStore, _ := e.agent(nil, acp.ClientCapabilities{})
	without := New(&stClient{}, Options{})
	for _, tc := range []struct {
		a    *Agent
		want bool
	}{{withStore, true}, {without, false}} {
		r, err := tc.a.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1})
		if err != nil {
			t.Fatal(err)
		}
		sc := r.AgentCapabilities.SessionCapabilities
		got := []bool{r.AgentCapabilities.LoadSession, sc.List != nil, sc.Resume != nil, sc.Delete != nil}
		if !slices.Equal(got, []bool{tc.want, tc.want, tc.want, tc.want}) {
			t.Errorf("store %v: loadSession, list, resume, delete = %v", tc.want, got)
		}
		if sc.Close == nil {
			t.Error("close must always be advertised")
		}
	}
	// Without a store the methods say they are not offered.
	_, err := without.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: "x", Cwd: "/w"})
	var ae *acp.Error
	if !errors.As(err, &ae) || ae.Code != acp.CodeMethodNotFound {
		t.Errorf("load without a store = %v, want method not found", err)
	}
	if _, err := without.ListSessions(t.Context(), &acp.ListSessionsRequest{}); !errors.As(err, &ae) || ae.Code != acp.CodeMethodNotFound {
		t.Errorf("list without a store = %v, want method not found", err)
	}
}

// failingClient loses the connection after a number of updates.
type failingClient struct {
	stClient
	left int
}

func (c *failingClient) SessionUpdate(ctx context.Context, id string, u acp.Update) error {
	if c.left--; c.left < 0 {
		return errors.New("connection closed")
	}
	return c.stClient.SessionUpdate(ctx, id, u)
}

// TestLoadAbortedByClosedConnection: a load whose replay cannot be
// delivered leaves no half-live session and no held log behind.
func TestLoadAbortedByClosedConnection(t *testing.T) {
	e := newStEnv(t)
	a1, c1 := e.agent(stScript(t, stResponses[:2]...), acp.ClientCapabilities{})
	id := e.newSession(a1)
	e.prompt(a1, c1, id, stPrompts[0])
	a1.Shutdown()

	st, err := session.OpenStore(e.dir, &session.StoreOptions{Now: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	fc := &failingClient{left: 3}
	a2 := New(fc, Options{Store: st, Now: e.clock})
	_, err = a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}})
	if err == nil || !strings.Contains(err.Error(), "connection closed") {
		t.Fatalf("load over a broken connection = %v", err)
	}
	if _, err := a2.session(id); err == nil {
		t.Error("the failed load left the session live")
	}
	// The log was released: another agent can load it.
	a3, c3 := e.agent(nil, acp.ClientCapabilities{})
	if _, err := a3.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatalf("load after the aborted one: %v", err)
	}
	if c3.count() <= 3 {
		t.Errorf("replay sent %d updates", c3.count())
	}
}

// TestUnusableStoreKeepsSessionsWorking: when the state directory goes
// away, new sessions still work, in memory.
func TestUnusableStoreKeepsSessionsWorking(t *testing.T) {
	e := newStEnv(t)
	a, c := e.agent(stScript(t, stResponses[1]), acp.ClientCapabilities{})
	if err := os.RemoveAll(e.dir); err != nil {
		t.Fatal(err)
	}
	id := e.newSession(a)
	if s := a.liveSession(t, id); s.log.Persistent() {
		t.Fatal("the session claims to be saved in a directory that does not exist")
	}
	got := e.prompt(a, c, id, "still there?")
	if len(got) == 0 {
		t.Error("the prompt sent nothing")
	}
	if _, err := a.CloseSession(t.Context(), &acp.CloseSessionRequest{SessionID: id}); err != nil {
		t.Error(err)
	}
}

// TestFoldHistory: the model's context is what apply makes of the log.
func TestFoldHistory(t *testing.T) {
	user := func(text string) session.Event {
		return session.New(session.UserMessage{Prompt: json.RawMessage(`[]`), Text: text})
	}
	sent := session.New(session.UserContext{})
	answer := func(text string, calls ...string) session.Event {
		m := session.AssistantMessage{Text: text}
		for _, c := range calls {
			m.ToolCalls = append(m.ToolCalls, session.MessageCall{ID: c, Name: "read", Arguments: json.RawMessage(`{"file_path":"x"}`)})
		}
		return session.New(m)
	}
	result := func(id, text string) session.Event {
		return session.New(session.ToolResult{CallID: id, Result: registry.Result{Content: []registry.Content{registry.Text(text)}}})
	}
	reset := func(reason, summary string) session.Event {
		return session.New(session.ContextReset{Reason: reason, Summary: summary})
	}
	u := func(s string) model.Message { return model.Message{Role: model.RoleUser, Content: s} }
	a := func(s string, calls ...string) model.Message {
		m := model.Message{Role: model.RoleAssistant, Content: s}
		for _, c := range calls {
			m.ToolCalls = append(m.ToolCalls, model.ToolCall{ID: c, Name: "read", Arguments: json.RawMessage(`{"file_path":"x"}`)})
		}
		return m
	}
	tool := func(id, s string) model.Message {
		return model.Message{Role: model.RoleTool, ToolCallID: id, Content: s}
	}

	tests := []struct {
		name string
		evs  []session.Event
		want []model.Message
	}{
		{"a prompt that never reached a model is not context",
			[]session.Event{user("hi"), session.New(session.Notice{Text: "no model"})}, nil},
		{"a prompt cancelled before the model said anything is context",
			[]session.Event{user("hi"), sent}, []model.Message{u("hi")}},
		{"calls and their results, in order",
			[]session.Event{user("q"), sent, answer("look", "c1", "c2"), result("c1", "one"), result("c2", "two"), answer("done")},
			[]model.Message{u("q"), a("look", "c1", "c2"), tool("c1", "one"), tool("c2", "two"), a("done")}},
		{"a result for no call of the last response is not context",
			[]session.Event{user("q"), sent, answer("x", "c1"), result("zz", "stray"), result("c1", "one"), result("c1", "again")},
			[]model.Message{u("q"), a("x", "c1"), tool("c1", "one")}},
		{"additional context follows the last result of the response",
			[]session.Event{user("q"), sent, answer("x", "c1", "c2"),
				session.New(session.ToolResult{CallID: "c1", Result: registry.Result{Content: []registry.Content{registry.Text("one")}, Context: []string{"lint: 2 warnings"}}}),
				session.New(session.ToolResult{CallID: "c2", Result: registry.Result{Content: []registry.Content{registry.Text("two")}, Context: []string{"tests: ok"}}})},
			[]model.Message{u("q"), a("x", "c1", "c2"), tool("c1", "one"), tool("c2", "two"), u("lint: 2 warnings\n\ntests: ok")}},
		{"/clear empties the context",
			[]session.Event{user("q"), sent, answer("a"), user("/clear"), reset("clear", ""), user("next"), sent},
			[]model.Message{u("next")}},
		{"/compact leaves the summary",
			[]session.Event{user("q"), sent, answer("a"), user("/compact"), reset("compact", "we did q")},
			compactedContext("we did q")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newState(ctlState{}, nil)
			for _, ev := range tc.evs {
				st.apply(ev)
			}
			if got := st.history; cmp.Diff(got, tc.want) != "" {
				t.Errorf("history\n got %+v\nwant %+v", st.history, tc.want)
			}
		})
	}
}
