package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaFor derives an object JSON Schema from a struct type: properties
// from json tags, descriptions from `jsonschema:"..."` tags, and every field
// without omitempty/omitzero required.
func SchemaFor(t reflect.Type) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("parameters must be a struct, not %s", t)
	}
	s, err := schemaOf(t)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

func schemaOf(t reflect.Type) (map[string]any, error) {
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Slice, reflect.Array:
		items, err := schemaOf(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map keys must be strings in %s", t)
		}
		vals, err := schemaOf(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": vals}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Struct:
		if t == reflect.TypeFor[json.RawMessage]() {
			return map[string]any{}, nil
		}
		props := map[string]any{}
		var required []string
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			ps, err := schemaOf(f.Type)
			if err != nil {
				return nil, err
			}
			if d := f.Tag.Get("jsonschema"); d != "" {
				ps["description"] = d
			}
			if enum := f.Tag.Get("enum"); enum != "" {
				var vals []any
				for _, v := range strings.Split(enum, ",") {
					vals = append(vals, v)
				}
				ps["enum"] = vals
			}
			props[name] = ps
			optional := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") || f.Type.Kind() == reflect.Pointer
			if !optional {
				required = append(required, name)
			}
		}
		s := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			s["required"] = required
		}
		return s, nil
	}
	return nil, fmt.Errorf("unsupported field type %s", t)
}

// checkObjectSchema is what Define checks of a parameters schema: JSON,
// and an object schema. The rest is checked when it is compiled.
func checkObjectSchema(params json.RawMessage) error {
	var obj map[string]any
	if err := json.Unmarshal(params, &obj); err != nil {
		if json.Valid(params) {
			return fmt.Errorf(`parameters schema must be an object schema ("type": "object")`)
		}
		return fmt.Errorf("parameters schema is not JSON: %w", err)
	}
	if obj["type"] != "object" {
		return fmt.Errorf(`parameters schema must be an object schema ("type": "object")`)
	}
	return nil
}

func compileSchema(name string, params json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return nil, fmt.Errorf("parameters schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	url := "mem://tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// Validate checks arguments against the parameter schema. The error, an
// *Error with code INVALID_ARGS, lists every violation, path-qualified, so
// the model can correct itself in one step. The first call compiles the
// schema; one that does not compile fails every call with INVALID_SCHEMA.
func (d *Def) Validate(args json.RawMessage) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return &Error{Code: "INVALID_ARGS", Message: "invalid arguments: not valid JSON: " + err.Error()}
	}
	sch, err := d.schema()
	if err != nil {
		return &Error{Code: "INVALID_SCHEMA", Message: fmt.Sprintf("tool %q has a broken parameters schema: %v", d.Name, err)}
	}
	if msgs := violations(sch, v, "arguments"); msgs != nil {
		return &Error{Code: "INVALID_ARGS", Message: "invalid arguments: " + strings.Join(msgs, "; ")}
	}
	return nil
}

// violations validates v and returns one readable message per violation,
// or nil. root names the whole value in messages about the root itself.
func violations(sch *jsonschema.Schema, v any, root string) []string {
	verr := sch.Validate(v)
	if verr == nil {
		return nil
	}
	ve, ok := verr.(*jsonschema.ValidationError)
	if !ok {
		return []string{verr.Error()}
	}
	var msgs []string
	collect(ve, root, &msgs)
	// Sibling branches (allOf, nested causes) can report the same leaf twice.
	slices.Sort(msgs)
	return slices.Compact(msgs)
}

var printer = message.NewPrinter(language.English)

// collect flattens a validation error tree into readable leaf messages.
func collect(e *jsonschema.ValidationError, root string, out *[]string) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, root, out)
		}
		return
	}
	path := strings.Join(e.InstanceLocation, ".")
	subject := fmt.Sprintf("%q", path)
	if path == "" {
		subject = root
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			*out = append(*out, fmt.Sprintf("missing required property %q", join(path, m)))
		}
	case *kind.Type:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = article(w)
		}
		*out = append(*out, fmt.Sprintf("%s must be %s", subject, strings.Join(want, " or ")))
	case *kind.Enum:
		vals, _ := json.Marshal(k.Want)
		*out = append(*out, fmt.Sprintf("%s must be one of %s", subject, vals))
	case *kind.Const:
		val, _ := json.Marshal(k.Want)
		*out = append(*out, fmt.Sprintf("%s must be %s", subject, val))
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, fmt.Sprintf("%q is not a declared property (additionalProperties: false)", join(path, p)))
		}
	case *kind.FalseSchema:
		*out = append(*out, fmt.Sprintf("%s is not allowed", subject))
	default:
		*out = append(*out, fmt.Sprintf("%s: %s", subject, e.ErrorKind.LocalizedString(printer)))
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func article(t string) string {
	switch t {
	case "object", "array", "integer":
		return "an " + t
	}
	return "a " + t
}
