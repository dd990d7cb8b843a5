package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/tools/fs"
	"github.com/acp-bridge/acp-bridge/tools/todo"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// persistedTypes are the event types a log holds; the fold test must see
// each of them.
var persistedTypes = []string{
	session.TypeUserMessage, session.TypeUserContext, session.TypeAssistantChunk, session.TypeAssistantMessage,
	session.TypeToolCall, session.TypeToolStatus, session.TypeToolResult, session.TypeNotice,
	session.TypeTurnStart, session.TypeTurnEnd, session.TypeControls, session.TypePlan,
	session.TypeTitle, session.TypeUsage, session.TypeContextReset, session.TypeGrant,
	session.TypeSystemPrompt, session.TypeCompaction, session.TypeCompactionChunk,
	// session.TypePrune: TestAutoCompactionFoldsTheSame
	// session.TypeUserSteer: TestSteeringJoinsTheRunningTurn
	// session.TypeRewind, session.TypeFilesRestored: TestRewindFoldsTheSame
}

// foldAgent is an agent whose model reads images and has prices, with a tool
// that asks permission and the plan tool: a session that logs every event type.
func foldAgent(t *testing.T, dir string, p model.Provider) (*Agent, *grantClient) {
	t.Helper()
	st, err := session.OpenStore(dir, &session.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	fs.Register(reg)
	todo.Register(reg)
	registry.MustAdd(reg, registry.Tool[struct{}, string]{Name: "deploy", Description: "Deploy.",
		Run: func(context.Context, *registry.Call, struct{}) (string, error) { return "deployed", nil },
		Permission: func(*registry.Call, struct{}) *registry.Permission {
			return &registry.Permission{Reason: "deploys", Key: "deploy:prod", Subject: "deploys to prod"}
		},
	})
	c := &grantClient{option: optAllowAlways}
	a := New(c, Options{Registry: reg, Store: st, NewID: func() string { return "fold" },
		Models: []ModelChoice{{ID: "m/vision", Name: "vision", Provider: p, Images: true,
			Price: &Price{Input: 1, Output: 2, Currency: "EUR"}}}})
	if _, err := a.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Shutdown)
	return a, c
}

// snapshot is a state without its configuration, for comparing folds.
// stateOpts let cmp.Diff read a state's unexported fields.
var stateOpts = cmp.Options{cmp.AllowUnexported(state{}, ctlState{}, openCall{}, ctxSize{}, promptMark{}, cutMark{}),
	cmpopts.IgnoreFields(session.UserMessage{}, "Blocks")} // the live decode; a fold decodes what it needs

func snapshot(st *state) state {
	c := *st
	c.offered = nil
	return c
}

// TestFoldEqualsLive: a session's state is a fold of its log. The state a
// live session built event by event equals what folding its stored log
// gives, for a log holding every event type; and a session loaded in a new
// process sends the model byte for byte the request the live one sends,
// images included.
func TestFoldEqualsLive(t *testing.T) {
	cwd, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	usage := `"usage":{"inputTokens":1000,"outputTokens":100}`
	responses := []string{
		`{"parts":[{"thought":"Let me look."},{"text":"Planning."},` +
			`{"tool_call":{"name":"todo_write","arguments":{"todos":[{"content":"Read a.go","status":"in_progress"}]}}},` +
			`{"tool_call":{"name":"read","arguments":{"file_path":"a.go"}}},` +
			`{"tool_call":{"name":"deploy","arguments":{}}}],` + usage + `}`,
		`{"parts":[{"text":"Done."}],` + usage + `}`,
		`{"parts":[{"text":"We read a.go and deployed."}],` + usage + `}`, // the /compact summary
		`{"parts":[{"error":"connection reset"}]}`,                        // a failed request: a notice
		`{"parts":[{"text":"Next answer."}]}`,                             // the request compared below
	}
	live := &recorder{p: stScript(t, responses...)}
	a1, _ := foldAgent(t, dir, live)
	resp, err := a1.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.SessionID
	if _, err := a1.SetSessionMode(t.Context(), &acp.SetModeRequest{SessionID: id, ModeID: ModeAcceptEdits}); err != nil {
		t.Fatal(err)
	}
	image := acp.ContentBlock{Type: "image", MimeType: "image/png", Data: "iVBORw0KGgo="}
	for _, p := range [][]acp.ContentBlock{
		{acp.TextBlock("/clear")}, // an empty context: nothing changes, but the reset is logged
		{acp.TextBlock("Look at a.go and this picture"), image},
		{acp.TextBlock("/compact")},
		{acp.TextBlock("and now?")},
	} {
		if _, err := a1.Prompt(t.Context(), &acp.PromptRequest{SessionID: id, Prompt: p}); err != nil && !strings.Contains(err.Error(), "connection reset") {
			t.Fatal(err)
		}
	}
	s1 := a1.liveSession(t, id)
	evs := s1.log.Events()
	seen := map[string]bool{}
	for _, ev := range evs {
		seen[ev.Type()] = true
	}
	for _, typ := range persistedTypes {
		if !seen[typ] {
			t.Errorf("the session logged no %s event; the fold is not checked for it", typ)
		}
	}

	// Fold the log as stored on disk into a fresh state.
	_, stored, err := a1.o.Store.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	folded := newState(a1.defaultControls(), func(m string) bool { return a1.models.Find(m) != nil })
	for _, ev := range stored {
		folded.apply(ev)
	}
	s1.mu.Lock()
	want := snapshot(s1.st)
	s1.mu.Unlock()
	if diff := cmp.Diff(want, snapshot(folded), stateOpts); diff != "" {
		t.Errorf("fold of the stored log differs from the live state (-live +folded):\n%s", diff)
	}
	if want.ctl.mode != ModeAcceptEdits || want.ctl.title == "" || want.ctl.cost == 0 || !want.grants["deploy:prod"] {
		t.Errorf("the live state misses what the session did: %+v", want)
	}

	// A second process on a copy of the log, against the live one going on.
	dir2 := t.TempDir()
	raw, err := os.ReadFile(filepath.Join(dir, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir2, id+".jsonl"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	reloaded := &recorder{p: stScript(t, responses[len(responses)-1])}
	a2, _ := foldAgent(t, dir2, reloaded)
	if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	next := []acp.ContentBlock{acp.TextBlock("one more thing"), image}
	for _, a := range []*Agent{a1, a2} {
		if _, err := a.Prompt(t.Context(), &acp.PromptRequest{SessionID: id, Prompt: next}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := live.requests()
	wantReq, _ := json.Marshal(reqs[len(reqs)-1])
	gotReq, _ := json.Marshal(reloaded.requests()[0])
	if !bytes.Equal(gotReq, wantReq) {
		t.Errorf("the reloaded session's request differs from the live one:\nlive     %s\nreloaded %s", wantReq, gotReq)
	}
	if n := strings.Count(string(wantReq), image.Data); n != 1 {
		t.Errorf("the request holds the image %d times, want once (the earlier one was compacted away)", n)
	}
	// Before the compaction, the first image was in the context too.
	if first, _ := json.Marshal(reqs[0]); !strings.Contains(string(first), image.Data) {
		t.Errorf("the first request lacks its image: %s", first)
	}
}
