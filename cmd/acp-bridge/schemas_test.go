package main

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
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
