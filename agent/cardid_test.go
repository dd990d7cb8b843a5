package agent

import (
	"context"
	"encoding/json"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/google/go-cmp/cmp"
)

// TestRepeatedEndpointIDs: an endpoint that names every call "call_0"
// (within a response and across them) gets one card per call, with ids
// unique in the session, while the model reads its own ids back; the
// stored log folds to the same state.
func TestRepeatedEndpointIDs(t *testing.T) {
	cwd, dir := t.TempDir(), t.TempDir()
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		if err := os.WriteFile(filepath.Join(cwd, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	call := func(file string) string {
		return `{"tool_call":{"id":"call_0","name":"read","arguments":{"file_path":"` + file + `"}}}`
	}
	rec := &recorder{p: stScript(t,
		`{"parts":[`+call("a.txt")+`,`+call("b.txt")+`]}`,
		`{"parts":[`+call("c.txt")+`]}`,
		`{"parts":[{"text":"Read all three."}]}`)}
	a, c := foldAgent(t, dir, rec)
	resp, err := a.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(t.Context(), &acp.PromptRequest{SessionID: resp.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock("read them")}}); err != nil {
		t.Fatal(err)
	}

	c.mu.Lock()
	updates := append([]string(nil), c.updates...)
	c.mu.Unlock()
	cards := map[string]int{}
	re := regexp.MustCompile(`"sessionUpdate":"tool_call","toolCallId":"([^"]+)"`)
	for _, u := range updates {
		if m := re.FindStringSubmatch(u); m != nil {
			cards[m[1]]++
		}
	}
	if len(cards) != 3 {
		t.Fatalf("cards %v, want three distinct ids", cards)
	}
	for id, n := range cards {
		if n != 1 {
			t.Errorf("card %s announced %d times", id, n)
		}
	}

	// The last request: every assistant call and tool answer keeps call_0.
	msgs := rec.last()
	var calls, answers int
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			calls++
			if tc.ID != "call_0" {
				t.Errorf("the model's call id became %q", tc.ID)
			}
		}
		if m.Role == model.RoleTool {
			answers++
			if m.ToolCallID != "call_0" {
				t.Errorf("a tool answer refers to %q, not the endpoint's call_0", m.ToolCallID)
			}
		}
	}
	if calls != 3 || answers != 3 {
		b, _ := json.Marshal(msgs)
		t.Fatalf("%d calls and %d answers in the request, want 3 and 3: %s", calls, answers, b)
	}

	s := a.liveSession(t, resp.SessionID)
	_, stored, err := a.o.Store.Read(resp.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	folded := newState(a.defaultControls(), func(m string) bool { return a.models.Find(m) != nil })
	for _, ev := range stored {
		folded.apply(ev)
	}
	s.mu.Lock()
	want := snapshot(s.st)
	s.mu.Unlock()
	if diff := cmp.Diff(want, snapshot(folded), stateOpts); diff != "" {
		t.Errorf("the fold differs from the live state (-live +folded):\n%s", diff)
	}
}

// TestSessionNewMissingCwd: a cwd that does not exist is refused with
// -32602 naming it.
func TestSessionNewMissingCwd(t *testing.T) {
	e := newEditor(t, Options{})
	missing := filepath.Join(t.TempDir(), "gone")
	err := e.call(acp.MethodSessionNew, acp.NewSessionRequest{Cwd: missing, McpServers: []acp.McpServer{}}, &json.RawMessage{})
	if rpcCode(err) != acp.CodeInvalidParams || !regexp.MustCompile(regexp.QuoteMeta(missing)).MatchString(err.Error()) {
		t.Fatalf("err = %v, want -32602 naming %s", err, missing)
	}
}

// cutOnce streams "partial " and fails like a dropped connection the first
// time, then answers in full: what a retried cut stream looks like.
type cutOnce struct{ n int }

func (c *cutOnce) Stream(_ context.Context, _ *model.Request) iter.Seq2[model.Event, error] {
	c.n++
	first := c.n == 1
	return func(yield func(model.Event, error) bool) {
		if !yield(model.Event{Kind: model.EventText, Text: "partial "}, nil) {
			return
		}
		if first {
			yield(model.Event{}, &model.Error{Kind: model.ErrTransport, Msg: "connection reset"})
			return
		}
		_ = yield(model.Event{Kind: model.EventText, Text: "answer."}, nil) &&
			yield(model.Event{Kind: model.EventUsage, Usage: &model.Usage{InputTokens: 1, OutputTokens: 1}}, nil) &&
			yield(model.Event{Kind: model.EventFinish, Finish: model.FinishStop}, nil)
	}
}

// TestRetryDoesNotRepeatTheAnswer: a stream cut and retried shows its
// partial answer once, in the thread and in the log, and the model's
// context holds the answer once.
func TestRetryDoesNotRepeatTheAnswer(t *testing.T) {
	p := model.Retry(&cutOnce{}, model.RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }})
	a, c := foldAgent(t, t.TempDir(), p)
	resp, err := a.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(t.Context(), &acp.PromptRequest{SessionID: resp.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	thread := strings.Join(c.updates, "\n")
	c.mu.Unlock()
	if n := strings.Count(thread, "partial"); n != 1 {
		t.Errorf("the thread shows %q %d times:\n%s", "partial", n, thread)
	}
	if !strings.Contains(thread, "retrying") {
		t.Errorf("the thread does not say the request was retried:\n%s", thread)
	}
	s := a.liveSession(t, resp.SessionID)
	var logged strings.Builder
	for _, ev := range s.log.Events() {
		if ch, ok := ev.Payload.(session.AssistantChunk); ok {
			logged.WriteString(ch.Text)
		}
	}
	if logged.String() != "partial answer." {
		t.Errorf("the log's chunks say %q, want the answer once", logged.String())
	}
	h := s.history()
	if last := h[len(h)-1]; last.Content != "partial answer." {
		t.Errorf("the model's context ends with %+v", last)
	}
}

// answersDifferently streams "first try" and fails the first time, then
// answers something else: a retry that does not repeat the cut answer.
type answersDifferently struct{ n int }

func (c *answersDifferently) Stream(_ context.Context, _ *model.Request) iter.Seq2[model.Event, error] {
	c.n++
	first := c.n == 1
	return func(yield func(model.Event, error) bool) {
		if first {
			if yield(model.Event{Kind: model.EventText, Text: "first try"}, nil) {
				yield(model.Event{}, &model.Error{Kind: model.ErrTransport, Msg: "connection reset"})
			}
			return
		}
		_ = yield(model.Event{Kind: model.EventText, Text: "Second answer."}, nil) &&
			yield(model.Event{Kind: model.EventUsage, Usage: &model.Usage{InputTokens: 1, OutputTokens: 1}}, nil) &&
			yield(model.Event{Kind: model.EventFinish, Finish: model.FinishStop}, nil)
	}
}

// TestAbandonedAttemptOnReload: live, the cut answer stays on screen and a
// note says it was abandoned; the log marks it, and a reload shows only the
// answer that counted.
func TestAbandonedAttemptOnReload(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	p := model.Retry(&answersDifferently{}, model.RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }})
	a1, c1 := foldAgent(t, dir, p)
	resp, err := a1.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a1.Prompt(t.Context(), &acp.PromptRequest{SessionID: resp.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}); err != nil {
		t.Fatal(err)
	}
	c1.mu.Lock()
	live := strings.Join(c1.updates, "\n")
	c1.mu.Unlock()
	for _, want := range []string{"first try", "abandoned", "Second answer."} {
		if !strings.Contains(live, want) {
			t.Errorf("the live thread lacks %q:\n%s", want, live)
		}
	}
	a1.Shutdown()

	a2, c2 := foldAgent(t, dir, p)
	if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: resp.SessionID, Cwd: cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	c2.mu.Lock()
	replayed := strings.Join(c2.updates, "\n")
	c2.mu.Unlock()
	if strings.Contains(replayed, "first try") || strings.Contains(replayed, "abandoned") {
		t.Errorf("the reload shows the abandoned attempt:\n%s", replayed)
	}
	if strings.Count(replayed, "Second answer.") != 1 {
		t.Errorf("the reload does not show the answer once:\n%s", replayed)
	}
	if h := a2.liveSession(t, resp.SessionID).history(); h[len(h)-1].Content != "Second answer." {
		t.Errorf("the reloaded context ends with %+v", h[len(h)-1])
	}
}
