package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/google/go-cmp/cmp"
)

// A fork starts with the source's conversation: its next model request
// carries the same history the source's next request would, it answers
// like session/new (same controls), and the source is untouched. It is
// listed, loaded and deleted like any session, live or after a restart.
func TestForkContinuesTheConversation(t *testing.T) {
	for _, source := range []string{"live", "stored"} {
		t.Run(source, func(t *testing.T) {
			e := newStEnv(t)
			// The reference: the source goes on with the last prompt.
			ref := &recorder{p: stScript(t, stResponses...)}
			a0, c0 := e.agent(ref, acp.ClientCapabilities{})
			id0 := e.newSession(a0)
			for _, p := range stPrompts {
				e.prompt(a0, c0, id0, p)
			}

			a1, c1 := e.agent(stScript(t, stResponses[:6]...), acp.ClientCapabilities{})
			id := e.newSession(a1)
			for _, p := range stPrompts[:4] {
				e.prompt(a1, c1, id, p)
			}
			if _, err := a1.SetSessionMode(t.Context(), &acp.SetModeRequest{SessionID: id, ModeID: ModePlan}); err != nil {
				t.Fatal(err)
			}
			before := a1.liveSession(t, id).log.Len()
			a, c := a1, c1
			rec := &recorder{p: stScript(t, stResponses[6:]...)}
			if source == "stored" {
				a1.Shutdown()
				a, c = e.agent(rec, acp.ClientCapabilities{})
			} else {
				a.o.Model = rec
				a.models.Lone = rec // the catalog New made from the options
			}
			n := c.count()
			fork, err := a.ForkSession(t.Context(), &acp.ForkSessionRequest{SessionID: id, Cwd: e.cwd})
			if err != nil {
				t.Fatal(err)
			}
			if fork.SessionID == "" || fork.SessionID == id {
				t.Fatalf("fork id %q of %q", fork.SessionID, id)
			}
			if fork.Modes == nil || fork.Modes.CurrentModeID != ModePlan {
				t.Errorf("the fork's modes %+v, want the source's plan mode", fork.Modes)
			}
			if got := content(c.since(n)); len(got) != 0 {
				t.Errorf("the fork replayed %d updates; it answers like session/new:\n%s", len(got), strings.Join(got, "\n"))
			}
			// The reference's last prompt ran in ask mode; so does the fork's.
			if _, err := a.SetSessionMode(t.Context(), &acp.SetModeRequest{SessionID: fork.SessionID, ModeID: ModeAsk}); err != nil {
				t.Fatal(err)
			}
			e.prompt(a, c, fork.SessionID, stPrompts[4])
			if len(rec.reqs) != 1 {
				t.Fatalf("%d model requests for the fork's prompt", len(rec.reqs))
			}
			if want, got := ref.reqs[6].Messages[1:], rec.reqs[0].Messages[1:]; cmp.Diff(want, got) != "" {
				t.Errorf("the fork's model request differs from the source's next:\nwant %+v\n got %+v", want, got)
			}
			if source == "live" {
				if got := a.liveSession(t, id).log.Len(); got != before {
					t.Errorf("the source's log went from %d to %d events", before, got)
				}
			}
			list, err := a.ListSessions(t.Context(), &acp.ListSessionsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			listed := map[string]bool{}
			for _, p := range []string{"", list.NextCursor} {
				l, _ := a.ListSessions(t.Context(), &acp.ListSessionsRequest{Cursor: p})
				for _, s := range l.Sessions {
					listed[s.SessionID] = true
				}
			}
			if !listed[fork.SessionID] || !listed[id] {
				t.Errorf("listed %v, want the fork and its source", listed)
			}
			a.Shutdown()
			a2, _ := e.agent(stScript(t), acp.ClientCapabilities{})
			if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: fork.SessionID, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
				t.Errorf("load of the fork: %v", err)
			}
			if _, err := a2.DeleteSession(t.Context(), &acp.DeleteSessionRequest{SessionID: fork.SessionID}); err != nil {
				t.Errorf("delete of the fork: %v", err)
			}
			if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
				t.Errorf("the source after its fork was deleted: %v", err)
			}
		})
	}
}

func TestForkRefusals(t *testing.T) {
	e := newStEnv(t)
	a, _ := e.agent(stScript(t), acp.ClientCapabilities{})
	id := e.newSession(a)
	cases := []struct {
		name string
		req  acp.ForkSessionRequest
		code int
	}{
		{"unknown session", acp.ForkSessionRequest{SessionID: "nosuch", Cwd: e.cwd}, acp.CodeResourceNotFound},
		{"relative cwd", acp.ForkSessionRequest{SessionID: id, Cwd: "work"}, acp.CodeInvalidParams},
		{"unknown system prompt mode", acp.ForkSessionRequest{SessionID: id, Cwd: e.cwd,
			SystemPrompt: &acp.SystemPrompt{Mode: "replace", Content: []acp.ContentBlock{acp.TextBlock("x")}}}, acp.CodeInvalidParams},
	}
	for _, c := range cases {
		if _, err := a.ForkSession(t.Context(), &c.req); acpCode(err) != c.code {
			t.Errorf("%s: %v, want code %d", c.name, err, c.code)
		}
	}
}

// The client's system prompt reaches the model: after the agent's own
// instructions (append) or in their place (override, the workspace context
// staying). It is logged: a load gives the model the same prompt, a fork
// keeps it, and a later request's prompt replaces it. A prompt the agent
// cannot apply is refused, and no session is made.
func TestClientSystemPrompt(t *testing.T) {
	text := func(s string) []acp.ContentBlock { return []acp.ContentBlock{acp.TextBlock(s)} }
	sys := func(r *recorder, i int) string { return r.reqs[i].Messages[0].Content }
	e := newStEnv(t)
	rec := &recorder{p: stScript(t, `{"parts":[{"text":"a"}]}`, `{"parts":[{"text":"b"}]}`, `{"parts":[{"text":"c"}]}`)}
	a, c := e.agent(rec, acp.ClientCapabilities{})
	init, _ := a.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1})
	if sp := init.AgentCapabilities.SessionCapabilities.SystemPrompt; sp == nil || sp.Mode == nil || sp.Mode.Override == nil {
		t.Errorf("sessionCapabilities.systemPrompt = %+v, want append and override advertised", sp)
	}

	app, err := a.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: e.cwd, McpServers: []acp.McpServer{},
		SystemPrompt: &acp.SystemPrompt{Mode: acp.SystemPromptAppend, Content: text("Answer in French.")}})
	if err != nil {
		t.Fatal(err)
	}
	over, err := a.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: e.cwd, McpServers: []acp.McpServer{},
		SystemPrompt: &acp.SystemPrompt{Mode: acp.SystemPromptOverride, Content: text("You are a terse reviewer.")}})
	if err != nil {
		t.Fatal(err)
	}
	plain := e.newSession(a)
	for _, id := range []string{app.SessionID, over.SessionID, plain} {
		e.prompt(a, c, id, "hi")
	}
	if s := sys(rec, 0); !strings.HasPrefix(s, "You are acp-bridge") || !strings.HasSuffix(s, "\n\nAnswer in French.") {
		t.Errorf("append: system prompt %q", s)
	}
	if s := sys(rec, 1); !strings.HasPrefix(s, "You are a terse reviewer.") || strings.Contains(s, "You are acp-bridge") || !strings.Contains(s, e.cwd) {
		t.Errorf("override: system prompt %q, want the client's prompt and the workspace, not ours", s)
	}
	if s := sys(rec, 2); strings.Contains(s, "French") || strings.Contains(s, "terse") {
		t.Errorf("a session without a client prompt got one: %q", s)
	}

	// After a restart, the load folds the logged prompt; a fork keeps it.
	a.Shutdown()
	rec2 := &recorder{p: stScript(t, `{"parts":[{"text":"d"}]}`, `{"parts":[{"text":"e"}]}`, `{"parts":[{"text":"f"}]}`)}
	a2, c2 := e.agent(rec2, acp.ClientCapabilities{})
	if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: app.SessionID, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	e.prompt(a2, c2, app.SessionID, "again")
	fork, err := a2.ForkSession(t.Context(), &acp.ForkSessionRequest{SessionID: app.SessionID, Cwd: e.cwd})
	if err != nil {
		t.Fatal(err)
	}
	e.prompt(a2, c2, fork.SessionID, "and the fork")
	for i, what := range []string{"the loaded session", "its fork"} {
		if s := sys(rec2, i); !strings.HasSuffix(s, "\n\nAnswer in French.") {
			t.Errorf("%s: system prompt %q, want the logged client prompt", what, s)
		}
	}
	// A resume with a new prompt replaces it.
	if _, err := a2.ResumeSession(t.Context(), &acp.ResumeSessionRequest{SessionID: plain, Cwd: e.cwd,
		SystemPrompt: &acp.SystemPrompt{Mode: acp.SystemPromptAppend, Content: text("Use British spelling.")}}); err != nil {
		t.Fatal(err)
	}
	e.prompt(a2, c2, plain, "hello")
	if s := sys(rec2, 2); !strings.HasSuffix(s, "\n\nUse British spelling.") {
		t.Errorf("resume with a prompt: system prompt %q", s)
	}

	for _, bad := range []*acp.SystemPrompt{
		{Mode: "replace", Content: text("x")},
		{Mode: acp.SystemPromptAppend},
		{Mode: acp.SystemPromptAppend, Content: []acp.ContentBlock{{Type: "image", Data: "aGk=", MimeType: "image/png"}}},
	} {
		a2.mu.Lock()
		n := len(a2.sessions)
		a2.mu.Unlock()
		_, err := a2.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: e.cwd, McpServers: []acp.McpServer{}, SystemPrompt: bad})
		a2.mu.Lock()
		m := len(a2.sessions)
		a2.mu.Unlock()
		if acpCode(err) != acp.CodeInvalidParams || m != n {
			t.Errorf("systemPrompt %+v: %v, sessions %d → %d; want -32602 and no session", bad, err, n, m)
		}
	}
}

// PromptResponse.usage is the turn's tokens, summed over its model
// requests, when the endpoint reports them; none when it does not.
func TestPromptResponseUsage(t *testing.T) {
	cases := []struct {
		name  string
		usage []*model.Usage
		want  *acp.Usage
	}{
		{"two requests", []*model.Usage{{InputTokens: 100, OutputTokens: 10, CachedTokens: 60}, {InputTokens: 130, OutputTokens: 5}},
			&acp.Usage{TotalTokens: 245, InputTokens: 230, OutputTokens: 15, CachedReadTokens: ptrTo[uint64](60)}},
		{"no cache", []*model.Usage{{InputTokens: 7, OutputTokens: 3}}, &acp.Usage{TotalTokens: 10, InputTokens: 7, OutputTokens: 3}},
		{"estimates only", []*model.Usage{{InputTokens: 7, OutputTokens: 3, Estimated: true}}, nil},
		{"nothing reported", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newStEnv(t)
			a, _ := e.agent(usageModel(c.usage), acp.ClientCapabilities{})
			id := e.newSession(a)
			for range 2 { // the count starts again with every turn
				r, err := a.Prompt(t.Context(), &acp.PromptRequest{SessionID: id, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
				if err != nil {
					t.Fatal(err)
				}
				if cmp.Diff(r.Usage, c.want) != "" {
					t.Errorf("usage %+v, want %+v", r.Usage, c.want)
				}
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// usageModel answers every turn with len(us) requests: a read of a.go
// while more are to come, then text; the i-th request reports us[i].
func usageModel(us []*model.Usage) model.Provider { return &usageProvider{us: us} }

type usageProvider struct {
	mu sync.Mutex
	n  int
	us []*model.Usage
}

func (p *usageProvider) Stream(_ context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	p.mu.Lock()
	i := p.n
	p.n++
	p.mu.Unlock()
	return func(yield func(model.Event, error) bool) {
		k := 0
		if len(p.us) > 0 {
			k = i % len(p.us)
		}
		if k < len(p.us)-1 {
			if !yield(model.Event{Kind: model.EventToolCall, ToolCall: &model.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "read",
				Arguments: json.RawMessage(`{"file_path":"a.go"}`)}}, nil) {
				return
			}
		} else if !yield(model.Event{Kind: model.EventText, Text: "ok"}, nil) {
			return
		}
		if len(p.us) > 0 && !yield(model.Event{Kind: model.EventUsage, Usage: p.us[k]}, nil) {
			return
		}
		yield(model.Event{Kind: model.EventFinish, Finish: model.FinishStop}, nil)
	}
}

// acpCode is the code of an *acp.Error (a call straight to the agent).
func acpCode(err error) int {
	var e *acp.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// Out-of-band status is a notice for a client that set session.notices and
// agent text otherwise, live and on load alike: a retry of the model
// request, a stop at max_turn_requests.
func TestStatusNotices(t *testing.T) {
	retry := model.Event{Kind: model.EventRetry, Retry: &model.RetryInfo{Attempt: 2, Max: 3, Err: errors.New("HTTP 503")}}
	cases := []struct {
		name  string
		evs   [][]model.Event // the responses, in order
		max   int
		title string // the notice's
		text  string // in the agent text otherwise
	}{
		{"retry", [][]model.Event{{retry, {Kind: model.EventText, Text: "fine"}, {Kind: model.EventFinish, Finish: model.FinishStop}}}, 0,
			"Retrying the model request", "retrying in 0.0s, attempt 2 of 3"},
		{"max_turn_requests", [][]model.Event{{{Kind: model.EventToolCall, ToolCall: &model.ToolCall{ID: "c1", Name: "read",
			Arguments: json.RawMessage(`{"file_path":"a.go"}`)}}, {Kind: model.EventFinish, Finish: model.FinishToolCalls}}}, 1,
			"Stopped after 1 model requests", "reached its limit of 1 model requests"},
	}
	for _, c := range cases {
		for _, notices := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/notices=%v", c.name, notices), func(t *testing.T) {
				e := newStEnv(t)
				caps := acp.ClientCapabilities{}
				if notices {
					caps.Session.Notices = &acp.Empty{}
				}
				a, cl := e.agent(eventsModel(c.evs), caps)
				if c.max > 0 {
					a.o.MaxTurnRequests = c.max
				}
				id := e.newSession(a)
				live := strings.Join(e.prompt(a, cl, id, "go"), "\n")
				a.Shutdown()
				a2, cl2 := e.agent(eventsModel(nil), caps)
				if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}}); err != nil {
					t.Fatal(err)
				}
				replay := strings.Join(cl2.since(0), "\n")
				for what, got := range map[string]string{"live": live, "replay": replay} {
					hasNotice := strings.Contains(got, `"sessionUpdate":"notice"`) && strings.Contains(got, `"title":"`+c.title+`"`)
					hasText := strings.Contains(got, c.text)
					if hasNotice != notices || hasText == notices {
						t.Errorf("%s: notice %v, agent text %v; want notice %v:\n%s", what, hasNotice, hasText, notices, got)
					}
				}
			})
		}
	}
}

// eventsModel answers the i-th request with evs[i], and with text once they
// run out (or always, for the same single response when there is one).
func eventsModel(evs [][]model.Event) model.Provider { return &eventsProvider{evs: evs} }

type eventsProvider struct {
	mu  sync.Mutex
	n   int
	evs [][]model.Event
}

func (p *eventsProvider) Stream(context.Context, *model.Request) iter.Seq2[model.Event, error] {
	p.mu.Lock()
	i := p.n
	p.n++
	p.mu.Unlock()
	resp := []model.Event{{Kind: model.EventText, Text: "ok"}, {Kind: model.EventFinish, Finish: model.FinishStop}}
	if len(p.evs) > 0 {
		resp = p.evs[min(i, len(p.evs)-1)]
	}
	return func(yield func(model.Event, error) bool) {
		for _, ev := range resp {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Reasoning effort is a thought_level config option for a model that takes
// one: its value goes in the model request, it is logged with the controls
// (a reload keeps it), and a model that takes none neither offers it nor
// gets one.
func TestReasoningEffort(t *testing.T) {
	e := newStEnv(t)
	open := func() (*Agent, *recorder, *recorder) {
		think := &recorder{p: eventsModel(nil)}
		plain := &recorder{p: eventsModel(nil)}
		st, err := session.OpenStore(e.dir, &session.StoreOptions{Now: e.clock})
		if err != nil {
			t.Fatal(err)
		}
		a := New(&stClient{}, Options{Store: st, Now: e.clock, Models: []ModelChoice{
			{ID: "p/think", Name: "Think", Provider: think, ReasoningEfforts: []string{"low", "medium", "high"}},
			{ID: "p/plain", Name: "Plain", Provider: plain}}})
		if _, err := a.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Shutdown)
		return a, think, plain
	}
	effortOption := func(opts []acp.ConfigOption) *acp.ConfigOption {
		for i := range opts {
			if opts[i].Category == acp.CategoryThoughtLevel {
				return &opts[i]
			}
		}
		return nil
	}
	set := func(a *Agent, id, opt, v string) ([]acp.ConfigOption, error) {
		r, err := a.SetSessionConfigOption(t.Context(), &acp.SetConfigOptionRequest{SessionID: id, ConfigID: opt, Value: json.RawMessage(`"` + v + `"`)})
		if err != nil {
			return nil, err
		}
		return r.ConfigOptions, nil
	}
	run := func(a *Agent, id string) {
		if _, err := a.Prompt(t.Context(), &acp.PromptRequest{SessionID: id, Prompt: []acp.ContentBlock{acp.TextBlock("think")}}); err != nil {
			t.Fatal(err)
		}
	}

	a, think, plain := open()
	resp, err := a.NewSession(t.Context(), &acp.NewSessionRequest{Cwd: e.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.SessionID
	if o := effortOption(resp.ConfigOptions); o == nil || o.ID != "reasoning_effort" || o.CurrentValue != "medium" || len(o.Options) != 3 {
		t.Fatalf("thought_level option = %+v", o)
	}
	run(a, id)
	if opts, err := set(a, id, "reasoning_effort", "high"); err != nil || effortOption(opts).CurrentValue != "high" {
		t.Fatalf("set high: %v %+v", err, opts)
	}
	run(a, id)
	if _, err := set(a, id, "reasoning_effort", "extreme"); acpCode(err) != acp.CodeInvalidParams {
		t.Errorf("an effort the model does not take: %v", err)
	}
	opts, err := set(a, id, "model", "p/plain")
	if err != nil || effortOption(opts) != nil {
		t.Errorf("a model without efforts still offers one: %v %+v", err, opts)
	}
	run(a, id)
	if _, err := set(a, id, "reasoning_effort", "low"); acpCode(err) != acp.CodeInvalidParams {
		t.Errorf("an effort for a model that takes none: %v", err)
	}
	if _, err := set(a, id, "model", "p/think"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range think.requests() {
		got = append(got, r.ReasoningEffort)
	}
	if strings.Join(got, ",") != "medium,high" || plain.requests()[0].ReasoningEffort != "" {
		t.Errorf("efforts sent %v, to the plain model %q", got, plain.requests()[0].ReasoningEffort)
	}

	// A new process: the load folds the logged choice.
	a.Shutdown()
	a2, think2, _ := open()
	load, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: e.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if o := effortOption(load.ConfigOptions); o == nil || o.CurrentValue != "high" {
		t.Errorf("after a reload the effort is %+v, want high", o)
	}
	run(a2, id)
	if r := think2.requests(); len(r) != 1 || r[0].ReasoningEffort != "high" {
		t.Errorf("after a reload the request's effort is %v", r)
	}
}
