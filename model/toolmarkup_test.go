package model

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The leak filter over an answer streamed in pieces: what is shown as it
// comes (streamed), all that is shown once it ended, and the calls. The
// forms are the ones servers without a tool parser pass through. Text that
// cannot become a call is shown while the answer streams, not held to its
// end.
func TestLeakFilter(t *testing.T) {
	type call struct{ Name, Args string }
	tests := []struct {
		name     string
		chunks   []string
		streamed string // shown before the answer ended
		shown    string // shown in all
		calls    []call
	}{
		{"plain answer", []string{"Hello ", "there."}, "Hello there.", "Hello there.", nil},
		{"Hermes after text", []string{"Reading.\n<tool", `_call>{"name": "read", "arguments": {"file_path": "a"}}</tool_call>`}, "Reading.\n", "Reading.\n",
			[]call{{"read", `{"file_path": "a"}`}}},
		{"two Hermes calls", []string{`<tool_call>{"name":"read","arguments":{"file_path":"a"}}</tool_call>` + "\n" + `<tool_call>{"name":"read","arguments":"{\"file_path\":\"b\"}"}</tool_call>`}, "", "",
			[]call{{"read", `{"file_path":"a"}`}, {"read", `{"file_path":"b"}`}}},
		{"Qwen3-Coder XML", []string{"<tool_call>\n<function=read>\n<parameter=file_path>\nsrc/a.go\n</parameter>\n</function>\n</tool_call>"}, "", "",
			[]call{{"read", `{"file_path":"src/a.go"}`}}},
		{"Qwen3-Coder XML, the name cut by a chunk", []string{"<tool_call>\n<function=re", "ad", ">\n<parameter=file_path>\na\n</parameter>\n</function>\n</tool_call>"}, "", "",
			[]call{{"read", `{"file_path":"a"}`}}},
		{"<|tool_call|> list", []string{`<|tool_call|>[{"name": "read", "arguments": {"file_path": "a"}}]`}, "", "", []call{{"read", `{"file_path": "a"}`}}},
		{"Llama <function=…>{…}</function>", []string{`<function=read>{"file_path": "a"}</function>`}, "", "", []call{{"read", `{"file_path": "a"}`}}},
		{"bare JSON", []string{"  ", `{"name": "read", "parameters": {"file_path": "a"}}`}, "", "", []call{{"read", `{"file_path": "a"}`}}},
		{"bare JSON, the name cut by a chunk", []string{`{"name": "re`, `ad", "arguments": {"file_path": "a"}}`}, "", "", []call{{"read", `{"file_path": "a"}`}}},
		{"bare JSON, arguments before the name", []string{`{"arguments": {"file_path": "a"},`, ` "name": "read"}`}, "", "", []call{{"read", `{"file_path": "a"}`}}},
		{"bare JSON of another shape streams", []string{`{"answer"`, `: 42,`, ` "more": true}`}, `{"answer": 42, "more": true}`, `{"answer": 42, "more": true}`, nil},
		{"a JSON list answer streams", []string{"[1, ", "2]"}, "[1, 2]", "[1, 2]", nil},
		{"a JSON name that is no tool streams", []string{`{"name": "Al`, `ice", "age": 3}`}, `{"name": "Alice", "age": 3}`, `{"name": "Alice", "age": 3}`, nil},
		{"a JSON name no tool starts with streams at once", []string{`{"name": "Al`}, `{"name": "Al`, `{"name": "Al`, nil},
		{"a JSON call to a tool not offered streams", []string{`{"name": "rm", "arguments": {}}`}, `{"name": "rm", "arguments": {}}`, `{"name": "rm", "arguments": {}}`, nil},
		{"a tool not offered stays text", []string{`<tool_call>{"name": "rm", "arguments": {}}</tool_call>`},
			`<tool_call>{"name": "rm", "arguments": {}}</tool_call>`, `<tool_call>{"name": "rm", "arguments": {}}</tool_call>`, nil},
		{"a marker mentioned in prose, then more prose", []string{"Use <tool_call> tags", " like this."}, "Use <tool_call> tags like this.", "Use <tool_call> tags like this.", nil},
		{"a marker mentioned in prose, then a call", []string{"Use <tool_call> tags: ", `<tool_call>{"name":"read","arguments":{"file_path":"a"}}</tool_call>`},
			"Use <tool_call> tags: ", "Use <tool_call> tags: ", []call{{"read", `{"file_path":"a"}`}}},
		{"<function=…> in prose", []string{"The tag <function=read> opens", " a call."}, "The tag <function=read> opens a call.", "The tag <function=read> opens a call.", nil},
		{"<function=…> of a tool not offered", []string{"<function=reader>{}</function>"}, "<function=reader>{}</function>", "<function=reader>{}</function>", nil},
		{"<|tool_call|> in prose", []string{"Granite writes <|tool_call|> ", "before its calls."}, "Granite writes <|tool_call|> before its calls.", "Granite writes <|tool_call|> before its calls.", nil},
		{"a partial marker at a chunk end that is not one", []string{"a <tool", " box"}, "a <tool box", "a <tool box", nil},
		{"an unclosed call still counts", []string{`<tool_call>{"name": "read", "arguments": {"file_path": "a"}}`}, "", "", []call{{"read", `{"file_path": "a"}`}}},
		{"a call followed by prose stays text", []string{`<tool_call>{"name": "read", "arguments": {}}</tool_call>`, " and then I stop."},
			"", `<tool_call>{"name": "read", "arguments": {}}</tool_call> and then I stop.`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLeakFilter(&Request{Tools: []ToolSpec{{Name: "read"}}})
			var shown strings.Builder
			for _, c := range tt.chunks {
				shown.WriteString(f.text(c))
			}
			if shown.String() != tt.streamed {
				t.Errorf("streamed %q, want %q", shown.String(), tt.streamed)
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

// A long answer in JSON streams as it comes, one byte at a time too: what
// is held is never more than the start of a call (here a marker and the
// blank after it).
func TestLeakFilterStreamsJSON(t *testing.T) {
	answer := `{"items": [` + strings.Repeat(`{"id": 1, "text": "<tool_call> is a tag"}, `, 200) + `{}]}`
	f := newLeakFilter(&Request{Tools: []ToolSpec{{Name: "read"}}})
	var shown strings.Builder
	for i := range len(answer) {
		shown.WriteString(f.text(answer[i : i+1]))
		if held := i + 1 - shown.Len(); held > len("<tool_call> ") {
			t.Fatalf("after %d bytes %d are held", i+1, held)
		}
	}
	if _, rest := f.end(false); shown.String()+rest != answer {
		t.Errorf("shown %q", shown.String()+rest)
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
