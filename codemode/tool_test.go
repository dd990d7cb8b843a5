package codemode

import (
	"encoding/json"
	"testing"

	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
)

func TestToolDefinition(t *testing.T) {
	h := newRecorder(testRegistry(t))
	d, err := NewRunner(nil).Tool(h)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "run_code" || d.Description != "Execute a TypeScript program against the available tools. Takes two required arguments: "+
		"`code`, the BODY of an async function (erasable syntax only; top-level `await` and `return` work), and `description`, "+
		"a short summary of what the program does. Call tools as `await tools.name(args)` per the declarations in the system prompt. "+
		"Only what you print or return is program output — curate it. Image-bearing subtool results are attached after the run." {
		t.Errorf("definition = %s: %q", d.Name, d.Description)
	}
	cases := []struct {
		name, args string
		wantErr    bool
		wantText   string
		wantCode   string
	}{
		{"runs", `{"code":"console.log('captured output'); return 'CODE_ONE+CODE_TWO'","description":"Join two codes"}`, false, "captured output\nCODE_ONE+CODE_TWO", ""},
		{"fails", `{"code":"console.log('x'); throw new RangeError('too far')","description":"Break"}`, true,
			"Error: code run failed (exception): RangeError: too far\nCaptured output:\nx", CodeRunFailed},
		{"description required", `{"code":"return 1"}`, true, `Error: invalid arguments: missing required property "description"`, "INVALID_ARGS"},
		{"description non-empty", `{"code":"return 1","description":""}`, true, "", "INVALID_ARGS"},
	}
	p := pipeline.New(nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := p.Execute(t.Context(), d, &registry.Call{ID: "c", Name: ToolName, Args: json.RawMessage(c.args)})
			if r.IsError != c.wantErr || r.Code != c.wantCode || (c.wantText != "" && r.Text() != c.wantText) {
				t.Errorf("result = %+v\nwant text %q code %q", r, c.wantText, c.wantCode)
			}
		})
	}
	v, ok := d.PresentCall(json.RawMessage(`{"code":"return 1","description":"Add things"}`)).(registry.GenericCard)
	if !ok || v.Title != "Add things" || v.Kind != "execute" || len(v.Content) != 1 || v.Content[0].Text != "```ts\nreturn 1\n```" {
		t.Errorf("call card = %+v", v)
	}
}
