package codemode

import (
	"encoding/json"
	"testing"
)

// FuzzSchemaToTS: any input renders to a non-empty type without panicking,
// and the same input always renders the same way.
func FuzzSchemaToTS(f *testing.F) {
	for _, s := range []string{`{"type":"string"}`, `{"type":"object","properties":{"a":{"type":"array","items":{"enum":[1,"x"]}}},"required":["a"]}`,
		`{"oneOf":[{"type":"null"},{"allOf":[{"type":"object"}]}]}`, `true`, `[`, `{"type":["integer","null"]}`, `{"additionalProperties":{"$ref":"#"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := SchemaToTS(json.RawMessage(b), 1)
		if got == "" {
			t.Fatalf("empty type for %q", b)
		}
		if again := SchemaToTS(json.RawMessage(b), 1); again != got {
			t.Fatalf("not deterministic for %q: %q then %q", b, got, again)
		}
	})
}
