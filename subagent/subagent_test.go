package subagent

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/profiles"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/google/go-cmp/cmp"
)

// scripted answers request i with responses[i] and keeps the requests.
type scripted struct {
	mu        sync.Mutex
	responses [][]model.Event
	reqs      []*model.Request
}

func (s *scripted) Stream(_ context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	s.mu.Lock()
	i := len(s.reqs)
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	return func(yield func(model.Event, error) bool) {
		if i >= len(s.responses) {
			yield(model.Event{}, context.DeadlineExceeded)
			return
		}
		for _, ev := range s.responses[i] {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func text(s string) []model.Event { return []model.Event{{Kind: model.EventText, Text: s}} }

func call(id, name, args string) model.Event {
	return model.Event{Kind: model.EventToolCall, ToolCall: &model.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}}
}

type noIn struct{}

func testRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New()
	registry.MustAdd(reg, registry.Tool[noIn, string]{Name: "look", Facts: registry.Facts{ReadOnly: true},
		Run: func(context.Context, *registry.Call, noIn) (string, error) { return "seen", nil }})
	registry.MustAdd(reg, registry.Tool[noIn, string]{Name: "change",
		Run: func(context.Context, *registry.Call, noIn) (string, error) { return "changed", nil }})
	return reg
}

// spec is a Spec over scope whose recorder keeps what it was given.
func spec(p model.Provider, scope *registry.Scope, log *[]string) *Spec {
	return &Spec{Name: "explorer", Parent: "call_1", Provider: p, System: "sys", Prompt: "find it",
		Tools: scope, Pipeline: pipeline.New(nil),
		NewCall: func(id, name string, args json.RawMessage) *registry.Call {
			return &registry.Call{ID: id, Name: name, Args: args, Parent: "call_1"}
		},
		Start: func(_ context.Context, c *registry.Call) { *log = append(*log, "start "+c.ID+" "+c.Name) },
		Finish: func(_ context.Context, c *registry.Call, r registry.Result) {
			*log = append(*log, "finish "+c.ID+" "+r.Code)
		},
	}
}

func TestRunRestrictedToolIsAbsentAndUnknown(t *testing.T) {
	scope := testRegistry(t).NewScope()
	if _, err := scope.Restrict(registry.Restriction{Allow: []string{"look"}}); err != nil {
		t.Fatal(err)
	}
	p := &scripted{responses: [][]model.Event{
		{call("a", "look", `{}`), call("b", "change", `{}`)},
		text("It is there."),
	}}
	var log []string
	got, err := Run(t.Context(), spec(p, scope, &log))
	if err != nil || got != "It is there." {
		t.Fatalf("Run = %q, %v", got, err)
	}
	var offered []string
	for _, tl := range p.reqs[0].Tools {
		offered = append(offered, tl.Name)
	}
	if d := cmp.Diff([]string{"look"}, offered); d != "" {
		t.Errorf("tools offered (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"start call_1:task:1 look", "finish call_1:task:1 ", "start call_1:task:2 change", "finish call_1:task:2 UNKNOWN_TOOL"}, log); d != "" {
		t.Errorf("recorder (-want +got):\n%s", d)
	}
	// The second request has both results, under the model's own ids; the
	// system prompt and the task, none of anybody's history.
	msgs := p.reqs[1].Messages
	if len(msgs) != 5 || msgs[0].Content != "sys" || msgs[1].Content != "find it" || msgs[3].ToolCallID != "a" ||
		!strings.Contains(msgs[4].Content, `unknown tool "change"`) {
		t.Errorf("second request = %+v", msgs)
	}
}

func TestRunTypedAnswer(t *testing.T) {
	sch, err := registry.CompileStructured(json.RawMessage(`{"type":"object","properties":{"files":{"type":"array","items":{"type":"string"}}},"required":["files"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		answers []string
		want    string
		err     string
	}{
		{name: "valid at once", answers: []string{`{"files": ["a.go"]}`}, want: `{"files":["a.go"]}`},
		{name: "fenced", answers: []string{"```json\n{\"files\": []}\n```"}, want: `{"files":[]}`},
		{name: "corrected", answers: []string{"Here you are: a.go", `{"files": 1}`, `{"files": ["a.go", "b.go"]}`}, want: `{"files":["a.go","b.go"]}`},
		{name: "bounded", answers: []string{"no", "no", "no", "no", `{"files":[]}`}, err: "after 3 corrections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &scripted{}
			for _, a := range tt.answers {
				p.responses = append(p.responses, text(a))
			}
			var log []string
			s := spec(p, testRegistry(t).NewScope(), &log)
			s.Schema = sch
			got, err := Run(t.Context(), s)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Run = %q, %v; want an error saying %q", got, err, tt.err)
				}
				if len(p.reqs) != MaxCorrections+1 {
					t.Errorf("%d requests, want %d", len(p.reqs), MaxCorrections+1)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Run = %q, %v; want %q", got, err, tt.want)
			}
			if !strings.Contains(p.reqs[0].Messages[0].Content, `"required":["files"]`) {
				t.Errorf("the system prompt does not give the schema: %q", p.reqs[0].Messages[0].Content)
			}
			for i := 1; i < len(p.reqs); i++ {
				last := p.reqs[i].Messages[len(p.reqs[i].Messages)-1]
				if last.Role != model.RoleUser || !strings.Contains(last.Content, "does not match the output schema") {
					t.Errorf("request %d does not feed the violation back: %+v", i, last)
				}
			}
		})
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p := &scripted{}
	p.responses = [][]model.Event{{call("a", "look", `{}`)}}
	var log []string
	s := spec(p, testRegistry(t).NewScope(), &log)
	s.Start = func(context.Context, *registry.Call) { cancel() }
	if _, err := Run(ctx, s); err == nil {
		t.Fatal("a cancelled subagent answered")
	}
	if len(p.reqs) != 1 {
		t.Errorf("%d requests after the cancel, want 1", len(p.reqs))
	}
}

type launcher struct {
	got []string
}

func (l *launcher) Launch(_ context.Context, c *registry.Call, p profiles.Profile, prompt string, sch *registry.Structured) (string, error) {
	l.got = append(l.got, p.Name+" "+prompt+" "+c.ID+" "+string(schemaOf(sch)))
	return "done", nil
}

func schemaOf(s *registry.Structured) json.RawMessage {
	if s == nil {
		return nil
	}
	return s.Schema()
}

func (l *launcher) ReadOnly(p profiles.Profile) bool { return p.ReadOnly }

func TestTaskTool(t *testing.T) {
	set, _ := profiles.Load(nil)
	l := &launcher{}
	d, err := TaskTool(set, l)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Check(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Description, "- explorer: read-only tools") {
		t.Errorf("description does not list the profiles: %s", d.Description)
	}
	run := func(args string) registry.Result {
		t.Helper()
		c := &registry.Call{ID: "t1", Name: ToolName, Args: json.RawMessage(args)}
		r, err := d.Run(t.Context(), c)
		if err != nil {
			return registry.ErrorResult("TOOL_ERROR", err.Error())
		}
		return r
	}
	tests := []struct {
		args, want string
		safe       bool
	}{
		{args: `{"prompt":"look around","profile":"explorer"}`, want: "done", safe: true},
		{args: `{"prompt":"fix it"}`, want: "done"},
		{args: `{"prompt":"x","profile":"nobody"}`, want: "Error: "},
		{args: `{"prompt":"x","output_schema":{"type":"object","properties":{"n":{"type":"string","pattern":"a+"}}}}`, want: `keyword "pattern" is not supported`},
	}
	for _, tt := range tests {
		r := run(tt.args)
		if !strings.Contains(r.Text(), tt.want) {
			t.Errorf("%s: %q, want %q", tt.args, r.Text(), tt.want)
		}
		c := &registry.Call{ID: "t1", Name: ToolName, Args: json.RawMessage(tt.args)}
		if got := d.ConcurrencySafe(c); got != tt.safe && r.Text() == "done" {
			t.Errorf("%s: concurrency safe %v, want %v", tt.args, got, tt.safe)
		}
	}
	if d := cmp.Diff([]string{"explorer look around t1 ", "general fix it t1 "}, l.got); d != "" {
		t.Errorf("launched (-want +got):\n%s", d)
	}
	if got := Title(TaskInput{Prompt: "Find the parser\nand more"}); got != "general: Find the parser" {
		t.Errorf("title = %q", got)
	}
}
