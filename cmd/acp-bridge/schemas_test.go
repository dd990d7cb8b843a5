package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
)

// Tool schemas are marshalled and compiled at first use, not at start, so
// a broken one would only show then: every tool the binary registers must
// pass Check and compile (arguments {} may be refused, the schema not).
func TestBuiltinToolSchemasCompile(t *testing.T) {
	opts, err := agentOptions(&config{permissionMode: "ask", toolsMode: "native"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defs := opts.Registry.NewScope().Visible()
	if len(defs) < 5 {
		t.Fatalf("only %d tools registered", len(defs))
	}
	for _, d := range defs {
		if err := d.Check(); err != nil {
			t.Errorf("%s: %v", d.Name, err)
		}
		var e *registry.Error
		if err := d.Validate(json.RawMessage(`{}`)); errors.As(err, &e) && e.Code == registry.CodeInvalidSchema {
			t.Errorf("%s: %v", d.Name, err)
		}
	}
}

// TestRegistryLogsToConfiguredLogger: the registry the binary builds logs
// where the binary's logger writes, so a presenter panic (and a tool not
// offered because its schema failed) is seen in production, in the
// built-in tools' registry and in a tool that joins it later.
func TestRegistryLogsToConfiguredLogger(t *testing.T) {
	var logged strings.Builder
	opts, err := agentOptions(&config{permissionMode: "ask", toolsMode: "native"}, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	type in struct {
		Text string `json:"text"`
	}
	registry.MustAdd(opts.Registry, registry.Tool[in, string]{
		Name: "crashy_card",
		Run:  func(context.Context, *registry.Call, in) (string, error) { return "", nil },
		PresentCall: func(in) registry.View {
			panic("presenter bug")
		},
	})
	d, err := opts.Registry.NewScope().Resolve("crashy_card")
	if err != nil {
		t.Fatal(err)
	}
	if v := d.PresentCall(json.RawMessage(`{"text":"x"}`)); v != nil {
		t.Errorf("a panicking presenter gave view %v", v)
	}
	if !strings.Contains(logged.String(), "presenter bug") || !strings.Contains(logged.String(), "crashy_card") {
		t.Errorf("the presenter panic did not reach the configured logger; it logged:\n%s", logged.String())
	}
}
