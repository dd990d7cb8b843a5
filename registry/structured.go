package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The structured schema subset: what every provider's structured output and
// the Code Mode SDK renderer understand (the seed's unified subset: type,
// oneOf, properties, required, additionalProperties, items, enum, const,
// annotations). Anything else is refused when the schema is compiled, never
// silently ignored at validation time.
var (
	subsetKeywords = map[string]bool{
		"type": true, "properties": true, "required": true, "additionalProperties": true,
		"items": true, "enum": true, "const": true, "oneOf": true,
	}
	// Annotations change no validation outcome, so they are always accepted.
	annotationKeywords = map[string]bool{
		"title": true, "description": true, "default": true, "examples": true,
		"deprecated": true, "readOnly": true, "writeOnly": true, "$comment": true,
	}
	jsonTypes = map[string]bool{
		"object": true, "array": true, "string": true, "number": true,
		"integer": true, "boolean": true, "null": true,
	}
)

// Structured is a compiled schema of the structured subset: JSON Schema
// limited to type, oneOf, properties, required, additionalProperties, items,
// enum, const and annotations, with any of them at its root (an answer may
// be any JSON value: an object, an array, a string, a union of shapes).
type Structured struct {
	raw json.RawMessage
	sch *jsonschema.Schema
}

// CompileStructured checks raw against the structured subset and compiles
// it. A schema outside the subset fails with an *Error of code
// UNSUPPORTED_SCHEMA that lists every violation, each with its JSON pointer.
func CompileStructured(raw json.RawMessage) (*Structured, error) {
	if jsonDepth(raw) > MaxSchemaDepth {
		return nil, &Error{Code: CodeUnsupportedSchema, Message: fmt.Sprintf("unsupported schema: it nests deeper than %d levels", MaxSchemaDepth)}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &Error{Code: CodeUnsupportedSchema, Message: "unsupported schema: not valid JSON: " + err.Error()}
	}
	var bad []string
	checkSubset(doc, "#", &bad)
	if len(bad) > 0 {
		return nil, &Error{Code: CodeUnsupportedSchema, Message: "unsupported schema: " + strings.Join(bad, "; ")}
	}
	c := jsonschema.NewCompiler()
	url := fmt.Sprintf("mem://structured/%d.json", structuredSeq.Add(1))
	if err := c.AddResource(url, doc); err != nil {
		return nil, &Error{Code: CodeUnsupportedSchema, Message: "unsupported schema: " + err.Error()}
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, &Error{Code: CodeUnsupportedSchema, Message: "unsupported schema: " + err.Error()}
	}
	return &Structured{raw: bytes.Clone(raw), sch: sch}, nil
}

var structuredSeq atomic.Int64

// checkSubset appends one message per violation below ptr. It recurses
// only as deep as the document nests, which CompileStructured bounds first.
func checkSubset(node any, ptr string, bad *[]string) {
	if _, ok := node.(bool); ok {
		return // true / false schemas are plain JSON Schema and render fine
	}
	m, ok := node.(map[string]any)
	if !ok {
		*bad = append(*bad, fmt.Sprintf("%q: a schema must be an object or a boolean", ptr))
		return
	}
	typ, _ := m["type"].(string)
	// needs says a keyword belongs to one type: on a schema of another type
	// (or of none) it constrains nothing, which is a mistake to say loud.
	needs := func(k, want string) {
		if typ != want {
			*bad = append(*bad, fmt.Sprintf("%q: keyword %q needs \"type\": %q", ptr, k, want))
		}
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		v := m[k]
		at := ptr + "/" + escapePointer(k)
		switch {
		case annotationKeywords[k]:
		case !subsetKeywords[k]:
			*bad = append(*bad, fmt.Sprintf("%q: keyword %q is not supported", ptr, k))
		case k == "type":
			checkType(v, at, bad)
		case k == "properties":
			needs(k, "object")
			props, ok := v.(map[string]any)
			if !ok {
				*bad = append(*bad, fmt.Sprintf("%q: must be an object of schemas", at))
				continue
			}
			for _, n := range slices.Sorted(maps.Keys(props)) {
				checkSubset(props[n], at+"/"+escapePointer(n), bad)
			}
		case k == "required":
			needs(k, "object")
			list, ok := v.([]any)
			if !ok {
				*bad = append(*bad, fmt.Sprintf("%q: must be an array of property names", at))
				continue
			}
			props, _ := m["properties"].(map[string]any)
			for _, n := range list {
				name, ok := n.(string)
				if !ok {
					*bad = append(*bad, fmt.Sprintf("%q: must be an array of property names", at))
					break
				}
				if _, declared := props[name]; !declared {
					*bad = append(*bad, fmt.Sprintf("%q: %q is required but not a declared property", at, name))
				}
			}
		case k == "additionalProperties":
			needs(k, "object")
			if _, ok := v.(bool); !ok {
				*bad = append(*bad, fmt.Sprintf("%q: must be true or false (a schema for extra properties is not supported)", at))
			}
		case k == "items":
			needs(k, "array")
			checkSubset(v, at, bad)
		case k == "oneOf":
			// A union of shapes: each alternative is a schema of the subset
			// (the Code Mode SDK renders it as a TypeScript union).
			alts, ok := v.([]any)
			if !ok || len(alts) == 0 {
				*bad = append(*bad, fmt.Sprintf("%q: must be a non-empty array of schemas", at))
				continue
			}
			for i, alt := range alts {
				checkSubset(alt, fmt.Sprintf("%s/%d", at, i), bad)
			}
		case k == "enum":
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				*bad = append(*bad, fmt.Sprintf("%q: must be a non-empty array", at))
				continue
			}
			if typ == "" {
				*bad = append(*bad, fmt.Sprintf("%q: keyword \"enum\" needs a \"type\"", ptr))
				continue
			}
			for i, e := range list {
				checkScalar(e, typ, fmt.Sprintf("%s/%d", at, i), bad)
			}
		case k == "const":
			switch {
			case typ != "":
				checkScalar(v, typ, at, bad)
			case !isScalar(v):
				*bad = append(*bad, fmt.Sprintf("%q: must be a string, number, boolean or null", at))
			case v == nil:
				// The seed refuses it: a null const with no type reads as
				// no constraint at all to a renderer that tests for a value.
				*bad = append(*bad, fmt.Sprintf("%q: a null const needs \"type\": \"null\"", at))
			}
			if list, ok := m["enum"].([]any); ok && !slices.ContainsFunc(list, func(e any) bool { return sameJSON(e, v) }) {
				*bad = append(*bad, fmt.Sprintf("%q: %s is not one of the enum's values; no value could match both", at, jsonText(v)))
			}
		}
	}
}

// checkScalar refuses an enum or const value that is not a scalar of the
// declared type: a structured-output provider could never produce it.
func checkScalar(v any, typ, at string, bad *[]string) {
	if !isScalar(v) {
		*bad = append(*bad, fmt.Sprintf("%q: %s is not a scalar (string, number, boolean or null)", at, jsonText(v)))
		return
	}
	if jsonTypes[typ] && !isOfType(v, typ) {
		*bad = append(*bad, fmt.Sprintf("%q: %s is not %s", at, jsonText(v), article(typ)))
	}
}

// sameJSON compares two decoded JSON values; numbers compare by value.
func sameJSON(a, b any) bool {
	if x, ok := a.(json.Number); ok {
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, errx := x.Float64()
		fy, erry := y.Float64()
		return errx == nil && erry == nil && fx == fy || x == y
	}
	return jsonText(a) == jsonText(b)
}

func isScalar(v any) bool {
	switch v.(type) {
	case nil, string, bool, json.Number:
		return true
	}
	return false
}

// checkType accepts one type name: type arrays are outside the subset (a
// nullable value is an optional property instead).
func checkType(v any, at string, bad *[]string) {
	switch t := v.(type) {
	case string:
		if !jsonTypes[t] {
			*bad = append(*bad, fmt.Sprintf("%q: unknown type %q", at, t))
		}
	case []any:
		*bad = append(*bad, fmt.Sprintf("%q: type arrays are not supported; name one type", at))
	default:
		*bad = append(*bad, fmt.Sprintf("%q: must be a type name", at))
	}
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// Schema returns the schema text as compiled.
func (s *Structured) Schema() json.RawMessage { return s.raw }

// Validate checks a JSON value. The error, an *Error with code
// INVALID_VALUE, lists every violation, path-qualified.
func (s *Structured) Validate(value json.RawMessage) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return &Error{Code: CodeInvalidValue, Message: "invalid value: not valid JSON: " + err.Error()}
	}
	return s.validate(v, "value", CodeInvalidValue)
}

func (s *Structured) validate(v any, root, code string) error {
	if msgs := violations(s.sch, v, root); msgs != nil {
		return &Error{Code: code, Message: "invalid " + root + ": " + strings.Join(msgs, "; ")}
	}
	return nil
}
