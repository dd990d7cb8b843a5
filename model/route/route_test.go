package route

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acp-bridge/acp-bridge/model"
)

// named is a provider that answers with its own name, so a test sees
// where a request went.
type named string

func (n named) Stream(context.Context, *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) { yield(model.Event{Text: string(n)}, nil) }
}

func answer(t *testing.T, p model.Provider) (string, error) {
	t.Helper()
	for ev, err := range p.Stream(context.Background(), &model.Request{}) {
		if err != nil {
			return "", err
		}
		return ev.Text, nil
	}
	return "", errors.New("no event")
}

func newTable(listed map[string][]string) *Table {
	t := New(func(_ context.Context, r Route) ([]string, error) {
		if names, ok := listed[r.BaseURL]; ok {
			return names, nil
		}
		return nil, errors.New("no /models here")
	})
	t.Add("deepseek", "https://api.deepseek.com", true)
	t.Add("local", "http://localhost:11434/v1", false)
	return t
}

func TestSetRefusals(t *testing.T) {
	for _, tt := range []struct {
		name string
		id   string
		r    Route
		want string
	}{
		{"unknown provider", "main", Route{APIType: OpenAI, BaseURL: "https://gw.example/v1"}, `unknown provider "main" (this agent has deepseek, local)`},
		{"another protocol", "deepseek", Route{APIType: "anthropic", BaseURL: "https://gw.example"}, `apiType "anthropic" is not supported`},
		{"a custom protocol", "deepseek", Route{APIType: "_mine", BaseURL: "https://gw.example"}, `apiType "_mine" is not supported`},
		{"no scheme", "deepseek", Route{APIType: OpenAI, BaseURL: "gw.example/v1"}, "must be an http(s) URL"},
		{"not http", "deepseek", Route{APIType: OpenAI, BaseURL: "ftp://gw.example/v1"}, "must be an http(s) URL"},
		{"credentials in the URL", "deepseek", Route{APIType: OpenAI, BaseURL: "https://me:sk-secret@gw.example/v1"}, "must not carry credentials"},
		{"a key in the query", "deepseek", Route{APIType: OpenAI, BaseURL: "https://gw.example/v1?key=sk-secret"}, "must not have a query"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tab := newTable(nil)
			before := tab.List()
			err := tab.Set(context.Background(), tt.id, tt.r)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Set: %v, want an error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "sk-secret") {
				t.Errorf("the error quotes the key: %v", err)
			}
			if d := cmp.Diff(before, tab.List()); d != "" {
				t.Errorf("a refused set changed the table (-before +after):\n%s", d)
			}
		})
	}
}

func TestRouting(t *testing.T) {
	tab := newTable(map[string][]string{"http://gw.example/v1": {"llama3", "qwen3"}})
	var made []string
	mk := func(name string, r Route) (model.Provider, error) {
		made = append(made, name+"@"+r.BaseURL+" "+r.Headers["Authorization"])
		return named(name + "@" + r.BaseURL), nil
	}
	chat := tab.Provider("deepseek", "deepseek-chat", named("configured"), mk)
	local := tab.Provider("local", "llama3", named("configured local"), mk)

	steps := []struct {
		name      string
		do        func() error
		chat      string // what a request of deepseek-chat reaches
		local     string // and of the local model; "disabled" for the error
		list      []Info
		listed    map[string][]string
		changedGn bool
	}{
		{name: "as configured", do: func() error { return nil }, chat: "configured", local: "configured local",
			list: []Info{{ID: "deepseek", Supported: []string{"openai"}, Required: true, APIType: "openai", BaseURL: "https://api.deepseek.com"},
				{ID: "local", Supported: []string{"openai"}, APIType: "openai", BaseURL: "http://localhost:11434/v1"}},
			listed: map[string][]string{}},
		{name: "routed by the editor", do: func() error {
			return tab.Set(context.Background(), "deepseek", Route{APIType: OpenAI, BaseURL: "http://gw.example/v1", Headers: map[string]string{"Authorization": "Bearer sk-1"}})
		}, chat: "deepseek-chat@http://gw.example/v1", local: "configured local",
			list: []Info{{ID: "deepseek", Supported: []string{"openai"}, Required: true, APIType: "openai", BaseURL: "http://gw.example/v1"},
				{ID: "local", Supported: []string{"openai"}, APIType: "openai", BaseURL: "http://localhost:11434/v1"}},
			listed: map[string][]string{"deepseek": {"llama3", "qwen3"}}, changedGn: true},
		{name: "the local one disabled", do: func() error { return tab.Disable("local") },
			chat: "deepseek-chat@http://gw.example/v1", local: "disabled",
			list: []Info{{ID: "deepseek", Supported: []string{"openai"}, Required: true, APIType: "openai", BaseURL: "http://gw.example/v1"},
				{ID: "local", Supported: []string{"openai"}, Disabled: true}},
			listed: map[string][]string{"deepseek": {"llama3", "qwen3"}}, changedGn: true},
		{name: "routed again, to an endpoint without a list", do: func() error {
			return tab.Set(context.Background(), "deepseek", Route{APIType: OpenAI, BaseURL: "https://other.example/v1", Headers: map[string]string{"Authorization": "Bearer sk-2"}})
		}, chat: "deepseek-chat@https://other.example/v1", local: "disabled",
			list: []Info{{ID: "deepseek", Supported: []string{"openai"}, Required: true, APIType: "openai", BaseURL: "https://other.example/v1"},
				{ID: "local", Supported: []string{"openai"}, Disabled: true}},
			listed: map[string][]string{}, changedGn: true},
		{name: "the local one set again", do: func() error {
			return tab.Set(context.Background(), "local", Route{APIType: OpenAI, BaseURL: "http://gw.example/v1"})
		}, chat: "deepseek-chat@https://other.example/v1", local: "llama3@http://gw.example/v1",
			list: []Info{{ID: "deepseek", Supported: []string{"openai"}, Required: true, APIType: "openai", BaseURL: "https://other.example/v1"},
				{ID: "local", Supported: []string{"openai"}, APIType: "openai", BaseURL: "http://gw.example/v1"}},
			listed: map[string][]string{"local": {"llama3", "qwen3"}}, changedGn: true},
	}
	_, gen := tab.Listed()
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got, err := answer(t, chat); err != nil || got != st.chat {
			t.Errorf("%s: deepseek-chat reached %q (%v), want %q", st.name, got, err, st.chat)
		}
		got, err := answer(t, local)
		var me *model.Error
		if st.local == "disabled" {
			if !errors.As(err, &me) || !strings.Contains(me.Error(), `provider "local" was disabled by the editor`) {
				t.Errorf("%s: the disabled provider's model answered %q, %v", st.name, got, err)
			}
		} else if err != nil || got != st.local {
			t.Errorf("%s: the local model reached %q (%v), want %q", st.name, got, err, st.local)
		}
		if d := cmp.Diff(st.list, tab.List()); d != "" {
			t.Errorf("%s: List (-want +got):\n%s", st.name, d)
		}
		listed, g := tab.Listed()
		if d := cmp.Diff(st.listed, listed); d != "" {
			t.Errorf("%s: Listed (-want +got):\n%s", st.name, d)
		}
		if (g != gen) != st.changedGn {
			t.Errorf("%s: generation %d -> %d", st.name, gen, g)
		}
		gen = g
	}
	// One provider per model and set, each with the headers of its set.
	want := []string{"deepseek-chat@http://gw.example/v1 Bearer sk-1", "deepseek-chat@https://other.example/v1 Bearer sk-2", "llama3@http://gw.example/v1 "}
	if d := cmp.Diff(want, made); d != "" {
		t.Errorf("providers made (-want +got):\n%s", d)
	}
}

func TestDisableRefusals(t *testing.T) {
	tab := newTable(nil)
	if err := tab.Disable("deepseek"); err == nil || !strings.Contains(err.Error(), "is required") {
		t.Errorf("disabling the required provider: %v", err)
	}
	if err := tab.Disable("nope"); err == nil || !strings.Contains(err.Error(), `unknown provider "nope"`) {
		t.Errorf("disabling an unknown provider: %v", err)
	}
	if d := cmp.Diff(newTable(nil).List(), tab.List()); d != "" {
		t.Errorf("refused disables changed the table:\n%s", d)
	}
}

// The table keeps its own copy of the headers: a caller that reuses its
// map changes nothing.
func TestSetCopiesHeaders(t *testing.T) {
	tab := newTable(nil)
	h := map[string]string{"Authorization": "Bearer sk-1"}
	if err := tab.Set(context.Background(), "local", Route{APIType: OpenAI, BaseURL: "http://gw.example/v1", Headers: h}); err != nil {
		t.Fatal(err)
	}
	h["Authorization"] = "Bearer changed"
	var seen string
	p := tab.Provider("local", "m", named("configured"), func(_ string, r Route) (model.Provider, error) {
		seen = r.Headers["Authorization"]
		return named("routed"), nil
	})
	if _, err := answer(t, p); err != nil || seen != "Bearer sk-1" {
		t.Errorf("the route's key is %q (%v), want the one set", seen, err)
	}
}
