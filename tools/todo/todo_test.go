package todo

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
)

func TestTodoWrite(t *testing.T) {
	reg := registry.New()
	Register(reg)
	d := reg.NewScope().Get(Name)
	p := pipeline.New(nil)
	tests := []struct {
		name     string
		args     string
		wantErr  string
		wantMeta string
		wantText []string
	}{
		{name: "list", args: `{"todos":[{"content":" Read ","status":"completed"},{"content":"Fix","status":"in_progress","priority":"high"},{"content":"Test","status":"pending"}]}`,
			wantMeta: `{"plan":[{"content":"Read","status":"completed","priority":"medium"},{"content":"Fix","status":"in_progress","priority":"high"},{"content":"Test","status":"pending","priority":"medium"}]}`,
			wantText: []string{"1 of 3 completed", "- [x] Read", "- [~] Fix", "- [ ] Test"}},
		{name: "empty list clears the plan", args: `{"todos":[]}`, wantMeta: `{"plan":[]}`, wantText: []string{"empty"}},
		{name: "bad status", args: `{"todos":[{"content":"x","status":"done"}]}`, wantErr: "INVALID_ARGS"},
		{name: "missing todos", args: `{}`, wantErr: "INVALID_ARGS"},
		{name: "blank content", args: `{"todos":[{"content":"  ","status":"pending"}]}`, wantErr: "INVALID_ARGS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := p.Execute(t.Context(), d, &registry.Call{ID: "c", Name: Name, Args: json.RawMessage(tc.args)})
			if tc.wantErr != "" {
				if !r.IsError || r.Code != tc.wantErr {
					t.Fatalf("result = %+v, want code %s", r, tc.wantErr)
				}
				return
			}
			if r.IsError {
				t.Fatalf("failed: %s", r.Text())
			}
			if string(r.Meta) != tc.wantMeta {
				t.Errorf("meta = %s\nwant  %s", r.Meta, tc.wantMeta)
			}
			for _, w := range tc.wantText {
				if !strings.Contains(r.Text(), w) {
					t.Errorf("text lacks %q: %s", w, r.Text())
				}
			}
			// The list is the session's plan, shown once: no card.
			if v := d.PresentCall(json.RawMessage(tc.args)); v != (registry.NoCard{}) {
				t.Errorf("call view = %#v, want NoCard", v)
			}
			if d.Facts.Kind != "think" || !d.Facts.ReadOnly {
				t.Errorf("facts = %+v, want a read-only think tool (allowed in plan mode)", d.Facts)
			}
		})
	}
}
