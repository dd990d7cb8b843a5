package model

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The leak filter over an answer streamed in pieces: what is shown as it
// comes, and the calls or text at the end. The forms are the ones servers
// without a tool parser pass through.
func TestLeakFilter(t *testing.T) {
	type call struct{ Name, Args string }
	tests := []struct {
		name   string
		chunks []string
		shown  string // text shown while streaming and at the end
		calls  []call
	}{
		{"plain answer", []string{"Hello ", "there."}, "Hello there.", nil},
		{"Hermes after text", []string{"Reading.\n<tool", `_call>{"name": "read", "arguments": {"file_path": "a"}}</tool_call>`}, "Reading.\n",
			[]call{{"read", `{"file_path": "a"}`}}},
		{"two Hermes calls", []string{`<tool_call>{"name":"read","arguments":{"file_path":"a"}}</tool_call>` + "\n" + `<tool_call>{"name":"read","arguments":"{\"file_path\":\"b\"}"}</tool_call>`}, "",
			[]call{{"read", `{"file_path":"a"}`}, {"read", `{"file_path":"b"}`}}},
		{"Qwen3-Coder XML", []string{"<tool_call>\n<function=read>\n<parameter=file_path>\nsrc/a.go\n</parameter>\n</function>\n</tool_call>"}, "",
			[]call{{"read", `{"file_path":"src/a.go"}`}}},
		{"<|tool_call|> list", []string{`<|tool_call|>[{"name": "read", "arguments": {"file_path": "a"}}]`}, "", []call{{"read", `{"file_path": "a"}`}}},
		{"Llama <function=…>{…}</function>", []string{`<function=read>{"file_path": "a"}</function>`}, "", []call{{"read", `{"file_path": "a"}`}}},
		{"bare JSON", []string{"  ", `{"name": "read", "parameters": {"file_path": "a"}}`}, "", []call{{"read", `{"file_path": "a"}`}}},
		{"bare JSON of another shape stays text", []string{`{"answer": 42}`}, `{"answer": 42}`, nil},
		{"a tool not offered stays text", []string{`<tool_call>{"name": "rm", "arguments": {}}</tool_call>`}, `<tool_call>{"name": "rm", "arguments": {}}</tool_call>`, nil},
		{"a marker mentioned in prose, then more prose", []string{"Use <tool_call> tags", " like this."}, "Use <tool_call> tags like this.", nil},
		{"a partial marker at a chunk end that is not one", []string{"a <tool", " box"}, "a <tool box", nil},
		{"an unclosed call still counts", []string{`<tool_call>{"name": "read", "arguments": {"file_path": "a"}}`}, "", []call{{"read", `{"file_path": "a"}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLeakFilter(&Request{Tools: []ToolSpec{{Name: "read"}}})
			var shown strings.Builder
			for _, c := range tt.chunks {
				shown.WriteString(f.text(c))
			}
			cs, rest := f.end(false)
			shown.WriteString(rest)
			var got []call
			for _, c := range cs {
				got = append(got, call{c.Name, string(c.Arguments)})
			}
			if diff := cmp.Diff(tt.calls, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if shown.String() != tt.shown {
				t.Errorf("shown %q, want %q", shown.String(), tt.shown)
			}
		})
	}
	if f := newLeakFilter(&Request{}); f.text("<tool_call>") != "<tool_call>" {
		t.Error("without tools the text goes out as is")
	}
}

// A rejected call goes back under the name and arguments the model wrote,
// or a placeholder when they cannot be read.
func TestRejectedCall(t *testing.T) {
	for in, want := range map[string]markupCall{
		`<function=read>{"path": "go.mod"}</function>`:  {"read", json.RawMessage(`{"path": "go.mod"}`)},
		`<function=read{"path": "go.mod"}</function>`:   {"read", json.RawMessage(`{"path": "go.mod"}`)},
		`{"name": "grep", "arguments": {"pattern": 1}}`: {"grep", json.RawMessage(`{"pattern": 1}`)},
		`garbage`: {"invalid_tool_call", json.RawMessage(`{}`)},
	} {
		got := rejectedCall(in)
		if got.Name != want.Name || string(got.Arguments) != string(want.Arguments) {
			t.Errorf("rejectedCall(%q) = %s %s, want %s %s", in, got.Name, got.Arguments, want.Name, want.Arguments)
		}
	}
}
