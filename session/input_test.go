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
