package session

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
)

// TestLogKeepsNoDecodedArguments: a live tool/call event carries the call's
// decoded arguments to the translator (the event Append returns), but the
// log keeps only the arguments, as a reload reads them back.
func TestLogKeepsNoDecodedArguments(t *testing.T) {
	d, err := registry.Define(registry.Tool[struct{}, string]{Name: "t",
		Run: func(context.Context, *registry.Call, struct{}) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{}`)
	in := d.Decode(args)
	l := NewLog(nil)
	got := l.Append(New(ToolCall{CallID: "c", Name: "t", Args: args, Input: in}))
	if got.Payload.(ToolCall).Input != in {
		t.Error("the returned event lost the decoded arguments")
	}
	stored := l.Events()[0].Payload.(ToolCall)
	if stored.Input != nil || string(stored.Args) != `{}` || stored.CallID != "c" {
		t.Errorf("stored %+v, want the arguments without their decode", stored)
	}
}

// TestMessageCallArgumentsKeepTheirBytes: a model's arguments stay
// json.RawMessage in Go and a JSON string in the log, so broken JSON comes
// back byte for byte and logs written before keep reading.
func TestMessageCallArgumentsKeepTheirBytes(t *testing.T) {
	for _, tt := range []struct {
		name string
		args json.RawMessage
		line string
	}{
		{"object", json.RawMessage(`{"file_path":"a.go"}`), `{"id":"c","name":"read","arguments":"{\"file_path\":\"a.go\"}"}`},
		{"broken", json.RawMessage(`{"file_path":`), `{"id":"c","name":"read","arguments":"{\"file_path\":"}`},
		{"none", nil, `{"id":"c","name":"read","arguments":""}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(MessageCall{ID: "c", Name: "read", Arguments: tt.args})
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.line {
				t.Errorf("logged %s, want %s", b, tt.line)
			}
			var back MessageCall
			if err := json.Unmarshal([]byte(tt.line), &back); err != nil {
				t.Fatal(err)
			}
			if string(back.Arguments) != string(tt.args) || (tt.args == nil) != (back.Arguments == nil) {
				t.Errorf("read back %q, want %q", back.Arguments, tt.args)
			}
		})
	}
}
