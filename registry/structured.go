package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The structured schema subset: what every provider's structured output and
// the Code Mode SDK renderer understand. Anything else is refused when the
// schema is compiled, never silently ignored at validation time.
var (
	subsetKeywords = map[string]bool{
		"type": true, "properties": true, "required": true, "additionalProperties": true,
		"items": true, "enum": true, "const": true,
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

// Structured is a compiled schema of the structured subset: object-rooted
// JSON Schema limited to type, properties, required, additionalProperties,
// items, enum, const and annotations.
type Structured struct {
	raw json.RawMessage
	sch *jsonschema.Schema
}

// CompileStructured checks raw against the structured subset and compiles
// it. A schema outside the subset fails with an *Error of code
// UNSUPPORTED_SCHEMA that lists every violation, each with its JSON pointer.
func CompileStructured(raw json.RawMessage) (*Structured, error) {
	return compileSubset(raw, true)
}

func compileSubset(raw json.RawMessage, objectRoot bool) (*Structured, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &Error{Code: "UNSUPPORTED_SCHEMA", Message: "unsupported schema: not valid JSON: " + err.Error()}
	}
	var bad []string
	checkSubset(doc, "#", &bad)
	if objectRoot {
		if m, ok := doc.(map[string]any); !ok || m["type"] != "object" {
			bad = append(bad, `"#": the root must be an object schema ("type": "object")`)
		}
	}
	if len(bad) > 0 {
		return nil, &Error{Code: "UNSUPPORTED_SCHEMA", Message: "unsupported schema: " + strings.Join(bad, "; ")}
	}
	c := jsonschema.NewCompiler()
	url := fmt.Sprintf("mem://structured/%d.json", structuredSeq.Add(1))
	if err := c.AddResource(url, doc); err != nil {
		return nil, &Error{Code: "UNSUPPORTED_SCHEMA", Message: "unsupported schema: " + err.Error()}
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, &Error{Code: "UNSUPPORTED_SCHEMA", Message: "unsupported schema: " + err.Error()}
	}
	return &Structured{raw: bytes.Clone(raw), sch: sch}, nil
}

var structuredSeq atomic.Int64

// checkSubset appends one message per violation below ptr.
func checkSubset(node any, ptr string, bad *[]string) {
	if _, ok := node.(bool); ok {
		return // true / false schemas are plain JSON Schema and render fine
	}
	m, ok := node.(map[string]any)
	if !ok {
		*bad = append(*bad, fmt.Sprintf("%q: a schema must be an object or a boolean", ptr))
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
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
			props, ok := v.(map[string]any)
			if !ok {
				*bad = append(*bad, fmt.Sprintf("%q: must be an object of schemas", at))
				continue
			}
			names := make([]string, 0, len(props))
			for n := range props {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range names {
				checkSubset(props[n], at+"/"+escapePointer(n), bad)
			}
		case k == "required":
			list, ok := v.([]any)
			if !ok {
				*bad = append(*bad, fmt.Sprintf("%q: must be an array of property names", at))
				continue
			}
			for _, n := range list {
				if _, ok := n.(string); !ok {
					*bad = append(*bad, fmt.Sprintf("%q: must be an array of property names", at))
					break
				}
			}
		case k == "additionalProperties", k == "items":
			checkSubset(v, at, bad)
		case k == "enum":
			if list, ok := v.([]any); !ok || len(list) == 0 {
				*bad = append(*bad, fmt.Sprintf("%q: must be a non-empty array", at))
			}
		}
	}
}

func checkType(v any, at string, bad *[]string) {
	switch t := v.(type) {
	case string:
		if !jsonTypes[t] {
			*bad = append(*bad, fmt.Sprintf("%q: unknown type %q", at, t))
		}
	case []any:
		if len(t) == 0 {
			*bad = append(*bad, fmt.Sprintf("%q: must name at least one type", at))
		}
		for _, e := range t {
			if s, ok := e.(string); !ok || !jsonTypes[s] {
				*bad = append(*bad, fmt.Sprintf("%q: unknown type %v", at, e))
			}
		}
	default:
		*bad = append(*bad, fmt.Sprintf("%q: must be a type name or an array of them", at))
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
		return &Error{Code: "INVALID_VALUE", Message: "invalid value: not valid JSON: " + err.Error()}
	}
	return s.validate(v, "value", "INVALID_VALUE")
}

func (s *Structured) validate(v any, root, code string) error {
	if msgs := violations(s.sch, v, root); msgs != nil {
		return &Error{Code: code, Message: "invalid " + root + ": " + strings.Join(msgs, "; ")}
	}
	return nil
}
