package agent

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/tools/todo"
	"github.com/google/go-cmp/cmp"
)

// fakeClient is the editor: it records updates and answers permission
// requests. The embedded interface covers client methods these tests do not use.
type fakeClient struct {
	acp.Client
	mu      sync.Mutex
	updates []acp.Update
	asked   []string // tool call ids permission was asked for
}

func (f *fakeClient) SessionUpdate(_ context.Context, _ string, u acp.Update) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates = append(f.updates, u)
	return nil
}

func (f *fakeClient) RequestPermission(_ context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	f.mu.Lock()
	f.asked = append(f.asked, req.ToolCall.ToolCallID)
	f.mu.Unlock()
	return &acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: "allow-once"}}, nil
}

func (f *fakeClient) take() []acp.Update {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.updates
	f.updates = nil
	return u
}

func kinds(us []acp.Update) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.UpdateKind())
	}
	return out
}

// messageText joins the agent_message_chunk texts.
func messageText(us []acp.Update) string {
	var b strings.Builder
	for _, u := range us {
		if m, ok := u.(acp.AgentMessageChunk); ok {
			b.WriteString(m.Content.Text)
		}
	}
	return b.String()
}

func find[T acp.Update](us []acp.Update) []T {
	var out []T
	for _, u := range us {
		if v, ok := u.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// recorder records the requests a provider gets: the one model recorder of
// the agent tests.
type recorder struct {
	p    model.Provider
	mu   sync.Mutex
	reqs []*model.Request
}

func (r *recorder) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.p.Stream(ctx, req)
}

// requests returns the requests so far.
func (r *recorder) requests() []*model.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*model.Request(nil), r.reqs...)
}

// last returns the messages of the latest request.
func (r *recorder) last() []model.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs[len(r.reqs)-1].Messages
}

func recordedScript(t *testing.T, js string) *recorder {
	t.Helper()
	s, err := model.ParseScript([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{p: s}
}

// testTools: one tool of each kind the modes care about. Each records that it ran.
type ran struct {
	mu    sync.Mutex
	names []string
}

func (r *ran) add(n string) {
	r.mu.Lock()
	r.names = append(r.names, n)
	r.mu.Unlock()
}

type noArgs struct{}

func testRegistry(t *testing.T, r *ran) *registry.Registry {
	reg := registry.New()
	add := func(name string, view registry.View, facts registry.Facts, asks bool) {
		tool := registry.Tool[noArgs, string]{
			Name: name, Description: "Test tool " + name + ". More.", Facts: facts,
			Run:         func(context.Context, *registry.Call, noArgs) (string, error) { r.add(name); return name + " done", nil },
			PresentCall: func(noArgs) registry.View { return view },
		}
		if asks {
			tool.Permission = func(*registry.Call, noArgs) *registry.Permission {
				return &registry.Permission{Reason: name + " changes things"}
			}
		}
		registry.MustAdd(reg, tool)
	}
	// The cards say nothing to the modes: the facts do.
	add("look", registry.GenericCard{Title: "look", Kind: "read"}, registry.Facts{ReadOnly: true, Kind: "read"}, false)
	add("edit_file", registry.DiffCard{Title: "edit"}, registry.Facts{Edits: true, Kind: "edit"}, true)
	add("shell", registry.TerminalCard{Command: "make"}, registry.Facts{Kind: "execute"}, true)
	todo.Register(reg)
	return reg
}

func newTestSession(t *testing.T, o Options) (*Agent, *fakeClient, string) {
	t.Helper()
	c := &fakeClient{}
	a := New(c, o)
	if _, err := a.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	resp, err := a.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Shutdown)
	return a, c, resp.SessionID
}

func prompt(t *testing.T, a *Agent, sid, text string) acp.StopReason {
	t.Helper()
	resp, err := a.Prompt(t.Context(), &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.StopReason
}

func TestNewSessionControls(t *testing.T) {
	models := []ModelChoice{{ID: "p/a", Name: "A", Provider: recordedScript(t, `{"responses":[]}`)}, {ID: "p/b", Name: "B", Images: true, Provider: recordedScript(t, `{"responses":[]}`)}}
	c := &fakeClient{}
	a := New(c, Options{Models: models, DefaultModel: "p/b", PermissionMode: ModeAcceptEdits})
	init, _ := a.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1})
	if !init.AgentCapabilities.PromptCapabilities.Image {
		t.Errorf("image prompts not advertised though the default model accepts images")
	}
	resp, err := a.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Modes == nil || resp.Modes.CurrentModeID != ModeAcceptEdits || len(resp.Modes.AvailableModes) != 3 { // no bypass without the opt-in
		t.Errorf("modes = %+v", resp.Modes)
	}
	if len(resp.ConfigOptions) != 3 || resp.ConfigOptions[2].ID != "tools_mode" || resp.ConfigOptions[2].CurrentValue != "native" || resp.ConfigOptions[0].Category != "mode" || resp.ConfigOptions[0].CurrentValue != ModeAcceptEdits ||
		resp.ConfigOptions[1].Category != "model" || resp.ConfigOptions[1].CurrentValue != "p/b" || len(resp.ConfigOptions[1].Options) != 2 {
		t.Errorf("configOptions = %+v", resp.ConfigOptions)
	}
	cmds := find[acp.AvailableCommandsUpdate](c.take())
	if len(cmds) != 1 {
		t.Fatalf("want one available_commands_update, got %d", len(cmds))
	}
	var names []string
	for _, cmd := range cmds[0].AvailableCommands {
		names = append(names, cmd.Name)
	}
	if got := strings.Join(names, " "); got != "help clear compact init mode model tools jobs rewind undo permissions" {
		t.Errorf("commands = %s", got)
	}

	// Switching, through both APIs; each change is pushed in both views.
	tests := []struct {
		name     string
		set      func() error
		wantMode string
		wantErr  bool
	}{
		{"config mode plan", func() error {
			r, err := a.SetSessionConfigOption(t.Context(), &acp.SetConfigOptionRequest{SessionID: resp.SessionID, ConfigID: "mode", Value: json.RawMessage(`"plan"`)})
			if err == nil && (len(r.ConfigOptions) != 3 || r.ConfigOptions[0].CurrentValue != ModePlan) {
				t.Errorf("response options = %+v", r.ConfigOptions)
			}
			return err
		}, ModePlan, false},
		{"legacy set_mode accept-edits", func() error {
			_, err := a.SetSessionMode(t.Context(), &acp.SetModeRequest{SessionID: resp.SessionID, ModeID: ModeAcceptEdits})
			return err
		}, ModeAcceptEdits, false},
		{"bypass is not offered", func() error {
			_, err := a.SetSessionMode(t.Context(), &acp.SetModeRequest{SessionID: resp.SessionID, ModeID: ModeBypass})
			return err
		}, "", true},
		{"unknown mode", func() error {
			_, err := a.SetSessionMode(t.Context(), &acp.SetModeRequest{SessionID: resp.SessionID, ModeID: "yolo"})
			return err
		}, "", true},
		{"unknown model", func() error {
			_, err := a.SetSessionConfigOption(t.Context(), &acp.SetConfigOptionRequest{SessionID: resp.SessionID, ConfigID: "model", Value: json.RawMessage(`"p/zz"`)})
			return err
		}, "", true},
		{"unknown option", func() error {
			_, err := a.SetSessionConfigOption(t.Context(), &acp.SetConfigOptionRequest{SessionID: resp.SessionID, ConfigID: "colour", Value: json.RawMessage(`"red"`)})
			return err
		}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.set()
			us := c.take()
			if tc.wantErr {
				var e *acp.Error
				if !errors.As(err, &e) || e.Code != acp.CodeInvalidParams {
					t.Fatalf("err = %v, want invalid params", err)
				}
				if len(us) != 0 {
					t.Errorf("a failed change sent %v", kinds(us))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			modes := find[acp.CurrentModeUpdate](us)
			opts := find[acp.ConfigOptionUpdate](us)
			if len(modes) != 1 || modes[0].CurrentModeID != tc.wantMode || len(opts) != 1 || opts[0].ConfigOptions[0].CurrentValue != tc.wantMode {
				t.Errorf("updates = %v", kinds(us))
			}
		})
	}
}

// TestModeGate runs the same model turn (three tool calls) in each mode.
func TestModeGate(t *testing.T) {
	const turn = `{"responses":[
		{"parts":[{"tool_call":{"name":"look"}},{"tool_call":{"name":"edit_file"}},{"tool_call":{"name":"shell"}}]},
		{"parts":[{"text":"done"}]}]}`
	tests := []struct {
		mode      string
		wantRan   string // tools that ran, in order
		wantAsked int    // permission requests
		wantDeny  int    // failed tool cards
	}{
		{ModeAsk, "look edit_file shell", 2, 0},
		{ModeAcceptEdits, "look edit_file shell", 1, 0},
		{ModeBypass, "look edit_file shell", 0, 0},
		{ModePlan, "look", 0, 2},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			r := &ran{}
			a, c, sid := newTestSession(t, Options{Registry: testRegistry(t, r), Model: recordedScript(t, turn), OfferBypass: true})
			if _, err := a.SetSessionMode(t.Context(), &acp.SetModeRequest{SessionID: sid, ModeID: tc.mode}); err != nil {
				t.Fatal(err)
			}
			if got := prompt(t, a, sid, "go"); got != acp.StopEndTurn {
				t.Fatalf("stop = %s", got)
			}
			if got := strings.Join(r.names, " "); got != tc.wantRan {
				t.Errorf("ran %q, want %q", got, tc.wantRan)
			}
			if len(c.asked) != tc.wantAsked {
				t.Errorf("asked %d times, want %d", len(c.asked), tc.wantAsked)
			}
			failed := 0
			for _, u := range find[acp.ToolCallUpdate](c.take()) {
				if u.Status != nil && *u.Status == acp.StatusFailed {
					failed++
					if !strings.Contains(string(u.RawOutput), "plan mode") {
						t.Errorf("denial does not say why: %s", u.RawOutput)
					}
				}
			}
			if failed != tc.wantDeny {
				t.Errorf("%d failed cards, want %d", failed, tc.wantDeny)
			}
		})
	}
}

func TestModeChangeTakesEffectNextCall(t *testing.T) {
	r := &ran{}
	reg := testRegistry(t, r)
	var a *Agent
	var sid string
	// A tool that switches the session to plan mode mid-turn, as the user
	// would from the editor while the turn runs.
	registry.MustAdd(reg, registry.Tool[noArgs, string]{Name: "switch", Description: "switch",
		PresentCall: func(noArgs) registry.View { return registry.GenericCard{Kind: "think"} },
		Run: func(ctx context.Context, _ *registry.Call, _ noArgs) (string, error) {
			_, err := a.SetSessionMode(ctx, &acp.SetModeRequest{SessionID: sid, ModeID: ModePlan})
			return "ok", err
		}})
	a, _, sid = newTestSession(t, Options{Registry: reg, PermissionMode: ModeBypass, Model: recordedScript(t, `{"responses":[
		{"parts":[{"tool_call":{"name":"edit_file"}},{"tool_call":{"name":"switch"}},{"tool_call":{"name":"edit_file"}}]},
		{"parts":[{"text":"done"}]}]}`)})
	prompt(t, a, sid, "go")
	if got := strings.Join(r.names, " "); got != "edit_file" {
		t.Errorf("ran %q; the edit after the switch to plan mode must not run", got)
	}
}

func TestCommands(t *testing.T) {
	r := &ran{}
	rec := recordedScript(t, `{"responses":[
		{"parts":[{"text":"Hello there."}],"usage":{"inputTokens":100,"outputTokens":20}},
		{"parts":[{"text":"The user said hello; I greeted them."}],"usage":{"inputTokens":150,"outputTokens":10}},
		{"parts":[{"text":"Still here."}]}]}`)
	other := recordedScript(t, `{"responses":[]}`)
	a, c, sid := newTestSession(t, Options{Registry: testRegistry(t, r), Models: []ModelChoice{
		{ID: "m/one", Name: "one", Provider: rec, ContextWindow: 1000},
		{ID: "m/two", Name: "two", Provider: other},
	}})
	c.take()
	prompt(t, a, sid, "hello")
	c.take()

	tests := []struct {
		line     string
		want     []string // substrings of the visible output
		wantUpds []string // other update kinds expected
		check    func(t *testing.T)
	}{
		{line: "/help", want: []string{"/clear", "/compact", "/mode", "/model", "/tools", "/help"}},
		{line: "/tools", want: []string{"`look`", "(read-only)", "`edit_file`", "`shell`", "`todo_write`", "permission mode **ask**"}},
		{line: "/mode", want: []string{"Permission mode: **ask**", "accept-edits", "bypass"}},
		{line: "/mode plan", want: []string{"now **plan**"}, wantUpds: []string{"current_mode_update", "config_option_update"}},
		{line: "/mode nonsense", want: []string{"Unknown mode `nonsense`"}},
		{line: "/model", want: []string{"Model: **m/one**", "m/two"}},
		{line: "/model m/nope", want: []string{"Unknown model `m/nope`"}},
		{line: "/frobnicate now", want: []string{"Unknown command `/frobnicate`", "/help"}},
		{line: "/compact", want: []string{"Compacting the context", "The user said hello"}, wantUpds: []string{"usage_update"}, check: func(t *testing.T) {
			a.mu.Lock()
			s := a.sessions[sid]
			a.mu.Unlock()
			if len(s.history()) != 2 || !strings.Contains(s.history()[0].Content, "The user said hello") {
				t.Errorf("history after compact = %+v", s.history())
			}
			// The summary request continues the one before it (the same
			// tools and messages: a prefix-cache hit, but for the system
			// message: /mode plan came between) and adds the instruction.
			prev, last := rec.reqs[len(rec.reqs)-2], rec.reqs[len(rec.reqs)-1]
			if cmp.Diff(last.Tools, prev.Tools) != "" || cmp.Diff(last.Messages[1:len(prev.Messages)], prev.Messages[1:]) != "" ||
				!strings.Contains(last.Messages[len(last.Messages)-1].Content, "Summarise") {
				t.Errorf("compaction request = %+v", last)
			}
		}},
		{line: "/clear", want: []string{"Context cleared", "2 earlier messages"}, wantUpds: []string{"usage_update"}, check: func(t *testing.T) {
			prompt(t, a, sid, "still there?")
			last := rec.reqs[len(rec.reqs)-1]
			if len(last.Messages) != 2 { // system + this prompt
				t.Errorf("after /clear the model got %d messages", len(last.Messages))
			}
		}},
		{line: "/model m/two", want: []string{"now **m/two**"}, wantUpds: []string{"config_option_update"}},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			before := len(rec.reqs)
			if got := prompt(t, a, sid, tc.line); got != acp.StopEndTurn {
				t.Errorf("stop = %s", got)
			}
			us := c.take()
			out := messageText(us)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, k := range tc.wantUpds {
				if !strings.Contains(strings.Join(kinds(us), " "), k) {
					t.Errorf("no %s among %v", k, kinds(us))
				}
			}
			if tc.line != "/compact" && len(rec.reqs) != before {
				t.Errorf("%s made a model request", tc.line)
			}
			if tc.check != nil {
				tc.check(t)
			}
		})
	}
}

func TestParseCommand(t *testing.T) {
	for in, want := range map[string]string{
		"/help":              "help|",
		"  /mode plan ":      "mode|plan",
		"/compact keep APIs": "compact|keep APIs",
		"/usr/bin is odd":    "",
		"// comment":         "",
		"/":                  "",
		"hello /help":        "",
	} {
		name, arg, ok := parseCommand(in)
		got := ""
		if ok {
			got = name + "|" + arg
		}
		if got != want {
			t.Errorf("parseCommand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUsageTitleAndPlan(t *testing.T) {
	r := &ran{}
	rec := recordedScript(t, `{"responses":[
		{"parts":[{"tool_call":{"name":"todo_write","arguments":{"todos":[{"content":"Read the code","status":"in_progress"},{"content":"Fix it","status":"pending","priority":"high"}]}}}],
		 "usage":{"inputTokens":1000,"outputTokens":200,"cachedTokens":500}},
		{"parts":[{"text":"Planned."}],"usage":{"inputTokens":1300,"outputTokens":50}},
		{"parts":[{"text":"Again."}]}]}`)
	a, c, sid := newTestSession(t, Options{Registry: testRegistry(t, r), PermissionMode: ModePlan, Models: []ModelChoice{
		{ID: "m/x", Name: "x", Provider: rec, ContextWindow: 64000, Price: &Price{Input: 2, CachedInput: 1, Output: 10, Currency: "EUR"}}}})
	c.take()
	prompt(t, a, sid, "  Please plan   the fix of the parser bug that eats semicolons in long files\nmore detail")
	us := c.take()

	plans := find[acp.Plan](us)
	if len(plans) != 1 || len(plans[0].Entries) != 2 || plans[0].Entries[0].Status != "in_progress" ||
		plans[0].Entries[0].Priority != "medium" || plans[0].Entries[1].Priority != "high" {
		t.Errorf("plan = %+v (todo_write is read-only, so it runs in plan mode)", plans)
	}
	if cards := find[acp.ToolCall](us); len(cards) != 0 {
		t.Errorf("todo_write drew a card besides the plan: %+v", cards)
	}
	usage := find[acp.UsageUpdate](us)
	if len(usage) != 2 {
		t.Fatalf("%d usage updates, want one per model call", len(usage))
	}
	// Cost: (500·2 + 500·1 + 200·10)/1e6, then + (1300·2 + 50·10)/1e6.
	want1, want2 := 3500.0/1e6, 3500.0/1e6+3100.0/1e6
	if usage[0].Used != 1200 || usage[0].Size != 64000 || usage[0].Cost == nil || !near(usage[0].Cost.Amount, want1) || usage[0].Cost.Currency != "EUR" {
		t.Errorf("usage[0] = %+v cost %+v", usage[0], usage[0].Cost)
	}
	if usage[1].Used != 1350 || !near(usage[1].Cost.Amount, want2) {
		t.Errorf("usage[1] = %+v cost %+v", usage[1], usage[1].Cost)
	}
	titles := find[acp.SessionInfoUpdate](us)
	if len(titles) != 1 || *titles[0].Title != "Please plan the fix of the parser bug that eats semicolons…" || titles[0].UpdatedAt == nil {
		t.Errorf("titles = %+v", titles)
	}
	prompt(t, a, sid, "again")
	if n := len(find[acp.SessionInfoUpdate](c.take())); n != 0 {
		t.Errorf("the title was sent again (%d)", n)
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// failingOnce fails the first attempt after some text, through the retry wrapper.
type failingOnce struct {
	mu sync.Mutex
	n  int
}

func (f *failingOnce) Stream(ctx context.Context, _ *model.Request) iter.Seq2[model.Event, error] {
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	return func(yield func(model.Event, error) bool) {
		if n == 1 {
			if !yield(model.Event{Kind: model.EventText, Text: "half an ans"}, nil) {
				return
			}
			yield(model.Event{}, &model.Error{Kind: model.ErrServer, Status: 503, Msg: "overloaded"})
			return
		}
		if yield(model.Event{Kind: model.EventText, Text: "A whole answer."}, nil) {
			yield(model.Event{Kind: model.EventFinish, Finish: model.FinishStop}, nil)
		}
	}
}

func TestRetryIsVisible(t *testing.T) {
	p := model.Retry(&failingOnce{}, model.RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }})
	a, c, sid := newTestSession(t, Options{Model: p})
	c.take()
	if got := prompt(t, a, sid, "hi"); got != acp.StopEndTurn {
		t.Fatalf("stop = %s", got)
	}
	out := messageText(c.take())
	if !strings.Contains(out, "retrying") || !strings.Contains(out, "HTTP 503") || !strings.Contains(out, "attempt 2 of 6") || !strings.HasSuffix(strings.TrimSpace(out), "A whole answer.") {
		t.Errorf("output = %q", out)
	}
	a.mu.Lock()
	s := a.sessions[sid]
	a.mu.Unlock()
	if h := s.history()[len(s.history())-1]; h.Content != "A whole answer." {
		t.Errorf("history kept the void attempt: %q", h.Content)
	}
}

func TestPromptContent(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	os.WriteFile(file, []byte("line one\nline two\n"), 0o644)
	bin := filepath.Join(dir, "blob.bin")
	os.WriteFile(bin, []byte{0, 1, 2, 0xff}, 0o644)
	big := filepath.Join(dir, "big.txt")
	os.WriteFile(big, []byte(strings.Repeat("é", linkedFileMax)), 0o644)
	text := "embedded body"
	blob := "iVBORw0KGgo="

	tests := []struct {
		name       string
		images     bool
		blocks     []acp.ContentBlock
		want       []string // substrings of the text the model gets
		wantImgs   int
		wantError  string
		wantNotice string // in the agent text of the turn
	}{
		{name: "file link read into context", blocks: []acp.ContentBlock{acp.TextBlock("see"), {Type: "resource_link", Name: "notes.txt", URI: "file://" + file}},
			want: []string{"see", `<resource uri="file://` + file, "line one\nline two"}},
		{name: "other scheme named", blocks: []acp.ContentBlock{acp.TextBlock("see"), {Type: "resource_link", Name: "doc", URI: "https://example.com/doc"}},
			want: []string{`[resource_link name="doc" uri="https://example.com/doc"]`}},
		{name: "missing file named with the reason", blocks: []acp.ContentBlock{{Type: "resource_link", Name: "gone", URI: "file://" + filepath.Join(dir, "gone")}},
			want: []string{"not readable"}},
		{name: "binary file not included", blocks: []acp.ContentBlock{{Type: "resource_link", Name: "blob", URI: "file://" + bin}},
			want: []string{"binary file, not included"}},
		{name: "big file truncated on a rune boundary", blocks: []acp.ContentBlock{{Type: "resource_link", Name: "big", URI: "file://" + big}},
			want: []string{`truncated="first 256 KiB"`}},
		{name: "embedded resource", blocks: []acp.ContentBlock{{Type: "resource", Resource: &acp.EmbeddedResource{URI: "file:///x.go", Text: &text}}},
			want: []string{`<resource uri="file:///x.go">`, "embedded body"}},
		{name: "image left out for a text-only model, the text sent", blocks: []acp.ContentBlock{acp.TextBlock("look"), {Type: "image", MimeType: "image/png", Data: blob}},
			want: []string{"look", "[image 1 left out: the model m does not read images]"}, wantNotice: "does not read images, so the image was left out"},
		{name: "image passed to a vision model", images: true, blocks: []acp.ContentBlock{acp.TextBlock("look"), {Type: "image", MimeType: "image/png", Data: blob}},
			want: []string{"look"}, wantImgs: 1},
		{name: "audio refused", blocks: []acp.ContentBlock{{Type: "audio", MimeType: "audio/wav", Data: "AAAA"}}, wantError: "audio content is not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := recordedScript(t, `{"responses":[{"parts":[{"text":"ok"}]}]}`)
			a, c, sid := newTestSession(t, Options{Models: []ModelChoice{{ID: "m", Name: "m", Provider: rec, Images: tc.images}}})
			_, err := a.Prompt(t.Context(), &acp.PromptRequest{SessionID: sid, Prompt: tc.blocks})
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("err = %v, want %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			user := rec.reqs[0].Messages[len(rec.reqs[0].Messages)-1]
			for _, w := range tc.want {
				if !strings.Contains(user.Content, w) {
					t.Errorf("model text lacks %q:\n%.300s", w, user.Content)
				}
			}
			if len(user.Images) != tc.wantImgs {
				t.Errorf("%d images, want %d", len(user.Images), tc.wantImgs)
			}
			if tc.wantNotice != "" && !strings.Contains(messageText(c.take()), tc.wantNotice) {
				t.Errorf("no notice %q", tc.wantNotice)
			}
		})
	}
}

// The controls are state like any other: a session folded from another's
// log comes back with its mode, model and title.
func TestControlsFoldFromTheLog(t *testing.T) {
	models := []ModelChoice{{ID: "m/a", Name: "a", Provider: recordedScript(t, `{"responses":[]}`)}, {ID: "m/b", Name: "b", Provider: recordedScript(t, `{"responses":[]}`)}}
	a, _, sid := newTestSession(t, Options{Models: models})
	a.mu.Lock()
	s := a.sessions[sid]
	a.mu.Unlock()
	s.ctl.set(t.Context(), "mode", ModeBypass)
	s.ctl.set(t.Context(), "model", "m/b")
	if ev, ok := titleEvent(s.ctl.read().title, "Refactor the parser", a.o.Now()); ok {
		s.emit(t.Context(), session.New(ev))
	}

	fresh := newState(a.defaultControls(), func(m string) bool { return a.models.Find(m) != nil })
	if fresh.ctl.mode != ModeAsk || fresh.ctl.model != "m/a" {
		t.Fatalf("fresh state starts at %s %s", fresh.ctl.mode, fresh.ctl.model)
	}
	for _, ev := range s.log.Events() {
		fresh.apply(ev)
	}
	if want := s.ctl.read(); fresh.ctl != want {
		t.Errorf("folded controls %+v, live %+v", fresh.ctl, want)
	}
	if fresh.ctl.mode != ModeBypass || fresh.ctl.model != "m/b" || fresh.ctl.title != "Refactor the parser" {
		t.Errorf("folded: %+v", fresh.ctl)
	}
}

// Bypass is in the picker only when opted in, or while it is the current
// mode (reached by /mode); the picker cannot choose it otherwise, so Zed's
// re-applied last pick cannot bring it back to a new session.
func TestBypassOptIn(t *testing.T) {
	hasBypass := func(opts []acp.ConfigOption) bool {
		for _, o := range opts[0].Options {
			if o.Value == ModeBypass {
				return true
			}
		}
		return false
	}
	pick := func(a *Agent, sid string) error {
		_, err := a.SetSessionConfigOption(t.Context(), &acp.SetConfigOptionRequest{SessionID: sid, ConfigID: "mode", Value: json.RawMessage(`"bypass"`)})
		return err
	}
	t.Run("opted in", func(t *testing.T) {
		a, _, _ := newTestSession(t, Options{OfferBypass: true})
		resp, err := a.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if !hasBypass(resp.ConfigOptions) || len(resp.Modes.AvailableModes) != 4 {
			t.Errorf("bypass not offered: %+v", resp.ConfigOptions[0].Options)
		}
		if err := pick(a, resp.SessionID); err != nil {
			t.Errorf("picking bypass: %v", err)
		}
	})
	t.Run("default", func(t *testing.T) {
		a, c, sid := newTestSession(t, Options{})
		if err := pick(a, sid); err == nil {
			t.Fatal("the picker chose bypass without the opt-in")
		}
		if got := prompt(t, a, sid, "/mode bypass"); got != acp.StopEndTurn {
			t.Fatalf("/mode bypass: %s", got)
		}
		opts := find[acp.ConfigOptionUpdate](c.take())
		if len(opts) != 1 || opts[0].ConfigOptions[0].CurrentValue != ModeBypass || !hasBypass(opts[0].ConfigOptions) {
			t.Errorf("after /mode bypass the picker lacks its current value: %+v", opts)
		}
		// A new session (where Zed re-applies the last pick) still refuses it.
		resp, err := a.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if hasBypass(resp.ConfigOptions) || pick(a, resp.SessionID) == nil {
			t.Errorf("a new session offers or takes bypass: %+v", resp.ConfigOptions[0].Options)
		}
	})
}

// After a refusal the editor drops the user's message from its thread
// (Zed does): the model's context drops the whole turn too, live and when
// the log is folded again.
func TestRefusalLeavesTheContext(t *testing.T) {
	rec := recordedScript(t, `{"responses":[
		{"parts":[{"text":"first answer"}]},
		{"parts":[{"tool_call":{"name":"look"}}]},
		{"parts":[{"text":"I can't help with that."}],"finish":"content_filter"},
		{"parts":[{"text":"third answer"}]}]}`)
	a, _, sid := newTestSession(t, Options{Registry: testRegistry(t, &ran{}), Model: rec})
	for _, p := range []struct {
		text string
		want acp.StopReason
	}{{"one", acp.StopEndTurn}, {"refused", acp.StopRefusal}, {"three", acp.StopEndTurn}} {
		if got := prompt(t, a, sid, p.text); got != p.want {
			t.Fatalf("%s: stop %s, want %s", p.text, got, p.want)
		}
	}
	last := rec.reqs[len(rec.reqs)-1].Messages
	var roles []string
	for _, m := range last[1:] { // after the system prompt
		roles = append(roles, string(m.Role)+":"+m.Content)
		if strings.Contains(m.Content, "refused") || strings.Contains(m.Content, "can't help") || m.Role == model.RoleTool {
			t.Errorf("the refused turn is still in the context: %+v", m)
		}
	}
	if got := strings.Join(roles, " | "); got != "user:one | assistant:first answer | user:three" {
		t.Errorf("context = %s", got)
	}
	s := a.liveSession(t, sid)
	fresh := newState(a.defaultControls(), func(m string) bool { return a.models.Find(m) != nil })
	for _, ev := range s.log.Events() {
		fresh.apply(ev)
	}
	if len(fresh.history) != len(s.history()) || len(fresh.history) != 4 {
		t.Errorf("folded history has %d messages, live %d, want 4", len(fresh.history), len(s.history()))
	}
}
