package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/compact"
	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/model/catalog"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/tools/fs"
	"github.com/google/go-cmp/cmp"
)

// newSessionCaps opens a session for a client with the given capabilities.
func (e *editor) newSessionCaps(cwd string, caps acp.ClientCapabilities) string {
	e.t.Helper()
	if err := e.call(acp.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: caps}, &acp.InitializeResponse{}); err != nil {
		e.t.Fatal(err)
	}
	var s acp.NewSessionResponse
	if err := e.call(acp.MethodSessionNew, acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}}, &s); err != nil {
		e.t.Fatal(err)
	}
	return s.SessionID
}

var showsCompaction = acp.ClientCapabilities{Session: acp.ClientSessionCaps{Compaction: &acp.Empty{}}}

// windowedModel is the scripted endpoint of the compaction tests: a model
// with a context window of window tokens (4 bytes of request body a token)
// that refuses a longer request with the usual 400, reports the size of
// each request as its usage (or lies with a fixed figure), reads a file
// for each user prompt, answers the results with a line, and writes a
// summary when asked for one.
type windowedModel struct {
	window int
	lie    int // non-zero: report this as prompt_tokens

	mu       sync.Mutex
	refused  int
	reported []int // prompt+completion reported per request, -1 when refused
}

func (w *windowedModel) reply(n int, req *chatRequest, bodyLen int) reply {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bodyLen/4 > w.window {
		w.refused++
		w.reported = append(w.reported, -1)
		return reply{status: 400, body: fmt.Sprintf(`{"error":{"message":"This model's maximum context length is %d tokens. However, you requested %d tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`, w.window, bodyLen/4)}
	}
	r := reply{complete: 30, prompt: bodyLen / 4}
	if w.lie != 0 {
		r.prompt = w.lie
	}
	w.reported = append(w.reported, r.prompt+r.complete)
	last := req.message(len(req.Messages) - 1)
	switch {
	case last.Role == "user" && strings.HasPrefix(last.Content, "Summarise"):
		r.text = fmt.Sprintf("Summary %d: the user asked about files one by one; each was read and described.", n)
	case last.Role == "user":
		k := strings.TrimPrefix(strings.Fields(last.Content)[len(strings.Fields(last.Content))-1], "#")
		args, _ := json.Marshal(map[string]string{"file_path": "f" + k + ".txt"})
		r.calls = []model.ToolCall{{ID: fmt.Sprintf("call%d", n), Name: "read", Arguments: args}}
	default:
		r.text = fmt.Sprintf("File described (request %d).", n)
	}
	return r
}

// windowedEndpoint serves w over HTTP.
func windowedEndpoint(t *testing.T, w *windowedModel) *endpoint {
	ep := &endpoint{t: t}
	ep.reply = func(n int, req *chatRequest) reply {
		ep.mu.Lock()
		size := len(ep.bodies[n])
		ep.mu.Unlock()
		return w.reply(n, req, size)
	}
	ep.srv = newServer(t, ep)
	return ep
}

func workspace(t *testing.T, files, size int) string {
	dir := t.TempDir()
	for i := range files {
		line := fmt.Sprintf("file %d says something worth reading\n", i)
		writeFile(t, filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), strings.Repeat(line, size/len(line)+1))
	}
	return dir
}

func isSummaryRequest(r *chatRequest) bool {
	last := r.message(len(r.Messages) - 1)
	return last.Role == "user" && strings.HasPrefix(last.Content, "Summarise")
}

// A session driven well past the model's window by a model that reports
// its growing usage never fails for lack of room: whenever a response's
// usage crosses 80 % of the window, the next request is a summary, the one
// after it starts from that summary, and every turn completes. A client
// that shows compactions sees each one as compaction updates.
func TestAutoCompactionBeforeTheWindowFills(t *testing.T) {
	const window = 6000
	w := &windowedModel{window: window}
	ep := windowedEndpoint(t, w)
	reg := registry.New()
	fs.Register(reg)
	e := newEditor(t, Options{Models: []ModelChoice{{ID: "m", Provider: ep.provider(window)}}, Registry: reg, UserInstructionsDir: "-"})
	sid := e.newSessionCaps(workspace(t, 4, 1500), showsCompaction)
	for i := range 24 {
		stop, err := e.prompt(sid, fmt.Sprintf("Question %d: what is in file #%d", i, i%4))
		if err != nil || stop != acp.StopEndTurn {
			t.Fatalf("turn %d: stop %q, err %v\n%s", i, stop, err, lastAgentText(e))
		}
	}
	reqs := ep.requests()
	if w.refused != 0 {
		t.Fatalf("%d requests were refused for length", w.refused)
	}
	limit := int(window * compact.DefaultThreshold)
	compactions := 0
	for i, r := range reqs {
		if isSummaryRequest(r) {
			compactions++
			if i+1 >= len(reqs) || !strings.HasPrefix(reqs[i+1].message(1).Content, compact.SummaryPrefix) {
				t.Fatalf("request %d does not start from the summary of request %d", i+1, i)
			}
			continue
		}
		if w.reported[i] > limit && (i+1 >= len(reqs) || !isSummaryRequest(reqs[i+1])) {
			t.Fatalf("request %d reported %d tokens (limit %d) but the next request is not a summary", i, w.reported[i], limit)
		}
	}
	if compactions < 2 {
		t.Fatalf("%d compactions in 24 turns of a %d-token window; want at least 2", compactions, window)
	}

	// The wire: each compaction in_progress, its summary streamed, completed;
	// every update valid against the schema.
	schema, err := acpschema.Default()
	if err != nil {
		t.Fatal(err)
	}
	status := map[string][]string{}
	chunks := map[string]string{}
	for _, u := range e.updates() {
		b, _ := json.Marshal(acp.SessionNotification{SessionID: sid, Update: u})
		if err := schema.Validate("SessionNotification", b); err != nil && !errors.Is(err, acpschema.ErrNotInSchema) {
			t.Errorf("invalid update %s: %v", b, err)
		}
		switch u := u.(type) {
		case *acp.CompactionUpdate:
			status[u.CompactionID] = append(status[u.CompactionID], u.Status)
		case *acp.CompactionSummaryChunk:
			chunks[u.CompactionID] += u.Content.Text
		case *acp.AgentMessageChunk:
			if strings.Contains(u.Content.Text, "Summarised") || strings.Contains(u.Content.Text, "nearly full") {
				t.Fatalf("a client that shows compactions got them as text too: %q", u.Content.Text)
			}
		}
	}
	if len(status) != compactions {
		t.Fatalf("%d compactions on the wire, %d summary requests", len(status), compactions)
	}
	for id, st := range status {
		if strings.Join(st, " ") != "in_progress completed" || !strings.HasPrefix(chunks[id], "Summary ") {
			t.Errorf("%s: statuses %v, summary %q", id, st, chunks[id])
		}
	}
}

// An endpoint whose own count disagrees with the usage it reported answers
// "context length exceeded": the agent compacts once and asks again, and
// the turn completes. A client without the compaction capability reads it
// as agent text.
func TestCompactOnceWhenTheEndpointRefuses(t *testing.T) {
	const window = 6000
	w := &windowedModel{window: window, lie: 100} // usage far below the truth
	ep := windowedEndpoint(t, w)
	reg := registry.New()
	fs.Register(reg)
	e := newEditor(t, Options{Models: []ModelChoice{{ID: "m", Provider: ep.provider(window)}}, Registry: reg, UserInstructionsDir: "-"})
	sid := e.newSession(workspace(t, 4, 1500))
	sawText := false
	for i := range 16 {
		stop, err := e.prompt(sid, fmt.Sprintf("Question %d: what is in file #%d", i, i%4))
		if err != nil || stop != acp.StopEndTurn {
			t.Fatalf("turn %d: stop %q, err %v", i, stop, err)
		}
		text := lastAgentText(e)
		if strings.Contains(text, "Model request failed") {
			t.Fatalf("turn %d failed:\n%s", i, text)
		}
		sawText = sawText || strings.Contains(text, "context window is full")
	}
	if w.refused == 0 {
		t.Fatal("the endpoint never refused: the test does not reach the window")
	}
	reqs := ep.requests()
	for i, r := range w.reported {
		if r != -1 {
			continue
		}
		if i+2 >= len(reqs) || !isSummaryRequest(reqs[i+1]) || !strings.HasPrefix(reqs[i+2].message(1).Content, compact.SummaryPrefix) {
			t.Fatalf("refused request %d is not followed by a summary and a retry from it", i)
		}
	}
	if !sawText {
		t.Error("the compaction was not reported as agent text")
	}
	for _, u := range e.updates() {
		if _, ok := u.(*acp.CompactionUpdate); ok {
			t.Fatal("compaction_update sent to a client that did not ask for it")
		}
	}
}

// Large tool results of older turns are shortened in the model's context
// when that makes room enough, without a summary; the log keeps them whole,
// and a session loaded in a new process sends the same next request byte
// for byte.
func TestPruneOldToolResultsFoldsTheSame(t *testing.T) {
	const window = 40000
	w := &windowedModel{window: window}
	ep := windowedEndpoint(t, w)
	dir, dir2 := t.TempDir(), t.TempDir()
	cwd := workspace(t, 4, 12000)
	newAgent := func(store string) *Agent {
		st, err := session.OpenStore(store, &session.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		reg := registry.New()
		fs.Register(reg)
		a := New(&grantClient{option: optAllowAlways}, Options{Registry: reg, Store: st, NewID: func() string { return "pruned" },
			Models: []ModelChoice{{ID: "m", Provider: ep.provider(window)}}, UserInstructionsDir: "-"})
		if _, err := a.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Shutdown)
		return a
	}
	ask := func(a *Agent, id, text string) {
		t.Helper()
		resp, err := a.Prompt(t.Context(), &acp.PromptRequest{SessionID: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
		if err != nil || resp.StopReason != acp.StopEndTurn {
			t.Fatalf("%q: %v %v", text, resp, err)
		}
	}
	a1 := newAgent(dir)
	resp, err := a1.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.SessionID
	pruned := false
	for i := 0; i < 14 && !pruned; i++ {
		ask(a1, id, fmt.Sprintf("Question %d: what is in file #%d", i, i%4))
		for _, ev := range a1.liveSession(t, id).log.Events() {
			_, pruned = ev.Payload.(session.Prune)
			if pruned {
				break
			}
		}
	}
	if !pruned {
		t.Fatal("no old tool result was shortened")
	}
	for _, r := range ep.requests() {
		if isSummaryRequest(r) {
			t.Fatal("a summary was asked for though shortening made room")
		}
	}
	s1 := a1.liveSession(t, id)
	hist := s1.history()
	short, whole := 0, 0
	for _, m := range hist {
		if m.Role == model.RoleTool {
			if strings.Contains(m.Content, "[Shortened old tool result]") {
				short++
			} else {
				whole++
			}
		}
	}
	if short == 0 || whole == 0 {
		t.Fatalf("after pruning: %d shortened and %d whole results; want old ones shortened, recent ones whole", short, whole)
	}
	logged := 0
	for _, ev := range s1.log.Events() {
		if r, ok := ev.Payload.(session.ToolResult); ok && len(r.Result.Text()) > 12000 {
			logged++
		}
	}
	if logged < short+whole {
		t.Fatalf("the log keeps %d whole results of %d", logged, short+whole)
	}

	// A second process on a copy of the log.
	raw, err := os.ReadFile(filepath.Join(dir, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir2, id+".jsonl"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	a2 := newAgent(dir2)
	if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if got := a2.liveSession(t, id).history(); cmp.Diff(got, hist) != "" {
		t.Fatal("the loaded session's context differs from the live one")
	}
	n := len(ep.requests())
	ask(a1, id, "One more: file #1")
	ask(a2, id, "One more: file #1")
	ep.mu.Lock()
	bodies := ep.bodies[n:]
	ep.mu.Unlock()
	// (The second request of each turn differs: the endpoint numbers its calls.)
	if len(bodies) != 4 || !bytes.Equal(bodies[0], bodies[2]) {
		t.Fatalf("the reloaded session's request differs from the live one's (%d requests)", len(bodies))
	}
}

// blockingSummary answers normally, but a summary request streams one
// piece and then waits for cancellation.
type blockingSummary struct {
	started chan struct{}
	once    sync.Once
	reqs    []*model.Request
	mu      sync.Mutex
}

func (b *blockingSummary) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	b.mu.Lock()
	b.reqs = append(b.reqs, req)
	b.mu.Unlock()
	return func(yield func(model.Event, error) bool) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == model.RoleUser && strings.HasPrefix(last.Content, "Summarise") {
			if !yield(model.Event{Kind: model.EventText, Text: "Half a summ"}, nil) {
				return
			}
			b.once.Do(func() { close(b.started) })
			<-ctx.Done()
			yield(model.Event{}, ctx.Err())
			return
		}
		for _, ev := range []model.Event{{Kind: model.EventText, Text: "answer"}, {Kind: model.EventUsage, Usage: &model.Usage{InputTokens: 10, OutputTokens: 2}}, {Kind: model.EventFinish, Finish: model.FinishStop}} {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// A compaction cancelled while the summary streams ends cancelled on the
// wire and leaves the context as it was.
func TestCancelledCompactionLeavesTheContext(t *testing.T) {
	p := &blockingSummary{started: make(chan struct{})}
	e, a := newEditorAgent(t, Options{Model: p, UserInstructionsDir: "-"})
	sid := e.newSessionCaps(t.TempDir(), showsCompaction)
	for _, q := range []string{"first", "second"} {
		if _, err := e.prompt(sid, q); err != nil {
			t.Fatal(err)
		}
	}
	a.mu.Lock()
	s := a.sessions[sid]
	a.mu.Unlock()
	before := s.history()
	done := make(chan acp.StopReason)
	go func() {
		stop, _ := e.prompt(sid, "/compact")
		done <- stop
	}()
	select {
	case <-p.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the summary never started")
	}
	if err := e.rpc.Notify(t.Context(), acp.MethodSessionCancel, acp.CancelNotification{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	if stop := <-done; stop != acp.StopCancelled {
		t.Fatalf("stop = %s, want cancelled", stop)
	}
	if got := s.history(); cmp.Diff(got, before) != "" {
		t.Fatalf("the context changed:\n%+v\nwas\n%+v", got, before)
	}
	var st []string
	for _, u := range e.updates() {
		if u, ok := u.(*acp.CompactionUpdate); ok {
			st = append(st, u.Status)
		}
	}
	if strings.Join(st, " ") != "in_progress cancelled" {
		t.Fatalf("compaction statuses %v", st)
	}
	if _, err := e.prompt(sid, "third"); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	last := p.reqs[len(p.reqs)-1]
	p.mu.Unlock()
	if cmp.Diff(last.Messages[1:len(before)+1], before) != "" {
		t.Fatal("the next request does not carry the context from before the cancelled compaction")
	}
}

// The window an endpoint names when it refuses a request narrows the policy
// from then on; wording without a number changes nothing.
func TestWindowFromRefusal(t *testing.T) {
	a, _, sid := newTestSession(t, Options{Model: &blockingSummary{}, UserInstructionsDir: "-"})
	a.mu.Lock()
	s := a.sessions[sid]
	a.mu.Unlock()
	tests := []struct {
		msg  string
		want int
	}{
		{"the prompt is too long", catalog.DefaultContextWindow},
		{"This model's maximum context length is 65536 tokens. However, you requested 70000 tokens.", 65536},
		{"the request exceeds the available context size of 500000 tokens", 65536}, // wider: not taken
		{"Maximum context length is 8192", 8192},
	}
	for _, tt := range tests {
		s.room.learn(&model.Error{Kind: model.ErrContextWindow, Status: 400, Msg: tt.msg})
		if got := s.room.policy().Window; got != tt.want {
			t.Errorf("after %q: window %d, want %d", tt.msg, got, tt.want)
		}
	}
}

// A prompt that alone fills the window is sent as it is: a summary of the
// little before it could not make room, and would cost a request.
func TestNoCompactionThatCannotMakeRoom(t *testing.T) {
	rec := recordedScript(t, `{"responses":[
		{"parts":[{"text":"hi"}],"usage":{"inputTokens":50,"outputTokens":5}},
		{"parts":[{"text":"that is long"}]}]}`)
	a, _, sid := newTestSession(t, Options{Models: []ModelChoice{{ID: "m", Provider: rec, ContextWindow: 1000}}, UserInstructionsDir: "-"})
	prompt(t, a, sid, "hello")
	if stop := prompt(t, a, sid, strings.Repeat("word ", 2000)); stop != acp.StopEndTurn {
		t.Fatalf("stop = %s", stop)
	}
	for _, r := range rec.requests() {
		if last := r.Messages[len(r.Messages)-1]; strings.HasPrefix(last.Content, "Summarise") {
			t.Fatal("compacted though what stays fills the window by itself")
		}
	}
	if n := len(rec.requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}
