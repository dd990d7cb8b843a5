package registry

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Any argument bytes give either nil or one INVALID_ARGS error, never a panic.
func FuzzValidate(f *testing.F) {
	d, err := Define(Tool[json.RawMessage, string]{
		Name: "f",
		Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"a":{"type":"object","properties":{"b":{"type":"array","items":{"enum":[1,"x"]}}},"required":["b"]},
			"n":{"type":"integer","minimum":0}},"required":["a"]}`),
		Run: func(context.Context, *Call, json.RawMessage) (string, error) { return "", nil },
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{``, `{}`, `{"a":{"b":[1,"x",2]}}`, `{"a":{"b":[]},"n":-1,"z":0}`, `[`, `null`, `{"a":{"b":{"c":1}}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		err := d.Validate(args)
		if err == nil {
			return
		}
		var te *Error
		if !errors.As(err, &te) || te.Code != "INVALID_ARGS" || !strings.HasPrefix(te.Message, "invalid arguments: ") {
			t.Fatalf("Validate(%q) = %#v", args, err)
		}
	})
}

// Any schema bytes compile or fail with UNSUPPORTED_SCHEMA, never a panic.
func FuzzCompileStructured(f *testing.F) {
	for _, seed := range []string{`{"type":"object"}`, `{"type":"object","properties":{"a":{"oneOf":[]}}}`, `true`, `{"type":["object","null"],"items":false}`, `{"$ref":"#"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		s, err := CompileStructured(schema)
		if err != nil {
			var te *Error
			if !errors.As(err, &te) || te.Code != "UNSUPPORTED_SCHEMA" {
				t.Fatalf("CompileStructured(%q) = %#v", schema, err)
			}
			return
		}
		_ = s.Validate(json.RawMessage(`{"a":1}`))
	})
}
