package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// outputSchema returns the output schema of a tool (declared, else derived
// from Out) and, when values must be checked at run time, its validator.
func outputSchema[Out any](declared json.RawMessage) (json.RawMessage, *Structured, error) {
	if declared != nil {
		s, err := compileSubset(declared, false)
		if err != nil {
			return nil, nil, err
		}
		return s.raw, s, nil
	}
	m, err := schemaOf(reflect.TypeFor[Out]())
	if err != nil {
		return nil, nil, err
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	if !hasEnum(m) {
		// The Go type already guarantees every other constraint a derived
		// schema states, so checking would only cost time.
		return raw, nil, nil
	}
	s, err := compileSubset(raw, false)
	if err != nil {
		return nil, nil, err
	}
	return raw, s, nil
}

func hasEnum(m map[string]any) bool {
	if _, ok := m["enum"]; ok {
		return true
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if sub, ok := m[k].(map[string]any); ok && hasEnum(sub) {
			return true
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, p := range props {
			if sub, ok := p.(map[string]any); ok && hasEnum(sub) {
				return true
			}
		}
	}
	return false
}

// check validates a body's value against the output schema.
func (s *Structured) check(out any) error {
	b, err := json.Marshal(out)
	if err != nil {
		return &Error{Code: "INVALID_OUTPUT", Message: "invalid output: " + err.Error()}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return &Error{Code: "INVALID_OUTPUT", Message: fmt.Sprintf("invalid output: %v", err)}
	}
	return s.validate(v, "output", "INVALID_OUTPUT")
}
