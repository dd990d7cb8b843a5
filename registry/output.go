package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	jsg "github.com/google/jsonschema-go/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// outputSchema returns the output schema of a tool: a declared one checked
// and compiled now; else one derived from Out now (a type that cannot be
// described fails at registration), marshalled and compiled on first use.
func outputSchema[Out any](declared json.RawMessage) (func() (outSpec, error), error) {
	if declared != nil {
		s, err := CompileStructured(declared)
		if err != nil {
			return nil, err
		}
		return func() (outSpec, error) { return outSpec{s.raw, s}, nil }, nil
	}
	m, err := derive(reflect.TypeFor[Out]())
	if err != nil {
		return nil, err
	}
	return sync.OnceValues(func() (outSpec, error) { return derivedOutput(m) }), nil
}

func derivedOutput(m *jsg.Schema) (outSpec, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return outSpec{}, err
	}
	if !hasEnum(m) {
		// The Go type already guarantees every other constraint a derived
		// schema states, so checking would only cost time.
		return outSpec{raw: raw}, nil
	}
	// Derived from a Go type, so trusted to compile: it may use more than
	// the subset declared schemas are held to (a map's value schema).
	c := jsonschema.NewCompiler()
	url := fmt.Sprintf("mem://output/%d.json", structuredSeq.Add(1))
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err == nil {
		err = c.AddResource(url, doc)
	}
	var sch *jsonschema.Schema
	if err == nil {
		sch, err = c.Compile(url)
	}
	if err != nil {
		return outSpec{}, err
	}
	return outSpec{raw, &Structured{raw: raw, sch: sch}}, nil
}

func hasEnum(s *jsg.Schema) bool {
	if s == nil {
		return false
	}
	if len(s.Enum) > 0 || hasEnum(s.Items) || hasEnum(s.AdditionalProperties) {
		return true
	}
	for _, p := range s.Properties {
		if hasEnum(p) {
			return true
		}
	}
	return false
}

// check validates a body's value against the output schema.
func (s *Structured) check(out any) error {
	b, err := json.Marshal(out)
	if err != nil {
		return &Error{Code: CodeInvalidOutput, Message: "invalid output: " + err.Error()}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return &Error{Code: CodeInvalidOutput, Message: fmt.Sprintf("invalid output: %v", err)}
	}
	return s.validate(v, "output", CodeInvalidOutput)
}
