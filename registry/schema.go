package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	jsg "github.com/google/jsonschema-go/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// parameterSchema derives the parameter schema of In: an object schema
// from jsonschema-go, with `enum` tags and the tool's adjustment applied.
func parameterSchema(t reflect.Type, adjust func(*jsg.Schema)) (*jsg.Schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct && t != rawMessage {
		return nil, fmt.Errorf("parameters must be a struct, not %s", t)
	}
	s, err := derive(t)
	if err != nil {
		return nil, err
	}
	if t == rawMessage {
		s = &jsg.Schema{Type: "object"} // any object: the tool reads the JSON itself
	}
	openObjects(s)
	if adjust != nil {
		adjust(s)
	}
	return s, nil
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// openObjects drops the "additionalProperties": false jsonschema-go puts on
// every struct, at every level. Arguments are taken as the seed takes them:
// extra keys are allowed (the decoder ignores them), so a stray key from
// the model does not cost a failed call and a retry. A tool that must
// refuse extras says so in its Schema adjustment or declared Parameters.
func openObjects(s *jsg.Schema) {
	if s == nil {
		return
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Not != nil && reflect.ValueOf(*ap.Not).IsZero() {
		s.AdditionalProperties = nil
	}
	openObjects(s.Items)
	openObjects(s.AdditionalProperties)
	for _, p := range s.Properties {
		openObjects(p)
	}
}

// derive is jsonschema-go's schema of t, made plain: nullable types
// (pointers, slices, maps, which encoding/json also accepts as null) name
// their one type, since optional is said by required, and `enum:"a,b"`
// tags become enums. What the Go type enforces by itself (bounds of sized
// integers, array lengths) is dropped: it is noise to a model and outside
// the structured subset output schemas are held to.
func derive(t reflect.Type) (*jsg.Schema, error) {
	s, err := jsg.ForType(t, &jsg.ForOptions{TypeSchemas: map[reflect.Type]*jsg.Schema{rawMessage: {}}})
	if err != nil {
		return nil, err
	}
	plain(s, t)
	return s, nil
}

func plain(s *jsg.Schema, t reflect.Type) {
	if s == nil {
		return
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	s.Minimum, s.Maximum, s.MinItems, s.MaxItems = nil, nil, nil, nil
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
		elem = t.Elem()
	}
	plain(s.Items, elem)
	if s.AdditionalProperties != nil && s.AdditionalProperties.Not == nil {
		plain(s.AdditionalProperties, elem)
	}
	if t == nil || t.Kind() != reflect.Struct {
		for _, p := range s.Properties {
			plain(p, nil)
		}
		return
	}
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		p := s.Properties[name]
		if p == nil || f.Anonymous && f.Tag.Get("json") == "" {
			continue
		}
		plain(p, f.Type)
		if enum := f.Tag.Get("enum"); enum != "" {
			p.Enum = nil
			for _, v := range strings.Split(enum, ",") {
				p.Enum = append(p.Enum, v)
			}
		}
	}
}

// checkSchema is what Define checks of a parameters schema: a JSON object
// schema, not too deep, its declared keywords well formed. It returns the
// parsed document for compileSchema, which the first call runs.
func checkSchema(params json.RawMessage) (any, error) {
	doc, err := objectSchema(params)
	if err != nil {
		return nil, err
	}
	if bad := checkDeclared(doc); len(bad) > 0 {
		return nil, fmt.Errorf("parameters schema: %s", strings.Join(bad, "; "))
	}
	return doc, nil
}

func compileSchema(name string, doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	url := "mem://tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// checkRawSchema checks what the model is shown of a RawSchema tool: a JSON
// object schema, no deeper than MaxSchemaDepth. It is not compiled.
func checkRawSchema(params json.RawMessage) error {
	_, err := objectSchema(params)
	return err
}

func objectSchema(params json.RawMessage) (any, error) {
	if jsonDepth(params) > MaxSchemaDepth {
		return nil, fmt.Errorf("parameters schema nests deeper than %d levels", MaxSchemaDepth)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return nil, fmt.Errorf("parameters schema is not JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok || obj["type"] != "object" {
		return nil, fmt.Errorf(`parameters schema must be an object schema ("type": "object")`)
	}
	return doc, nil
}

// MaxSchemaDepth bounds how deeply a schema document may nest (objects and
// arrays, so a property's schema is two levels below its parent's). The
// compiler's cost grows faster than the depth: an MCP server that sends a
// schema thousands of levels deep must get a clear error, not stall the
// session. Real schemas stay far below it.
const MaxSchemaDepth = 128

// jsonDepth is how deeply a JSON text nests, found by one scan of its
// bytes before anything decodes it (a decoder recurses once per level).
func jsonDepth(b []byte) int {
	d, most := 0, 0
	in, esc := false, false
	for _, c := range b {
		switch {
		case in:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
		case c == '"':
			in = true
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}

// checkDeclared lists what is wrong with a declared parameter schema that
// Define can see without compiling it (the compiler runs at the first
// call): a type name JSON Schema does not have, which would fail every
// call, and enum or const values that are not of the type the same schema
// declares (strings on a number would make every call fail, or the model
// send the wrong type).
func checkDeclared(doc any) []string {
	var bad []string
	var walk func(v any, ptr string)
	walk = func(v any, ptr string) {
		switch v := v.(type) {
		case map[string]any:
			switch typ := v["type"].(type) {
			case string:
				if !jsonTypes[typ] {
					bad = append(bad, fmt.Sprintf("%q: unknown type %q", ptr+"/type", typ))
				}
			case []any:
				for _, t := range typ {
					if n, ok := t.(string); !ok || !jsonTypes[n] {
						bad = append(bad, fmt.Sprintf("%q: unknown type %s", ptr+"/type", jsonText(t)))
					}
				}
			}
			if typ, ok := v["type"].(string); ok && jsonTypes[typ] {
				if list, ok := v["enum"].([]any); ok {
					for _, e := range list {
						if !isOfType(e, typ) {
							bad = append(bad, fmt.Sprintf("%q: enum value %s is not %s", ptr+"/enum", jsonText(e), article(typ)))
						}
					}
				}
				if c, ok := v["const"]; ok && !isOfType(c, typ) {
					bad = append(bad, fmt.Sprintf("%q: const value %s is not %s", ptr+"/const", jsonText(c), article(typ)))
				}
			}
			keys := slices.Sorted(maps.Keys(v))
			for _, k := range keys {
				switch k {
				case "enum", "const", "default", "examples":
					continue // values, not schemas
				}
				walk(v[k], ptr+"/"+escapePointer(k))
			}
		case []any:
			for i, e := range v {
				walk(e, fmt.Sprintf("%s/%d", ptr, i))
			}
		}
	}
	walk(doc, "#")
	return bad
}

// isOfType reports whether a decoded JSON value (numbers as json.Number)
// is of JSON Schema type typ.
func isOfType(v any, typ string) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f)
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return false
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Validate checks arguments against the parameter schema. The error, an
// *Error with code INVALID_ARGS, lists every violation, path-qualified, so
// the model can correct itself in one step. The first call compiles the
// schema; one that does not compile fails every call with INVALID_SCHEMA.
// A RawSchema tool is not validated: its arguments need only be a JSON object.
func (d *Def) Validate(args json.RawMessage) error {
	if d.schema == nil {
		trimmed := bytes.TrimSpace(args)
		if len(trimmed) > 0 && (!json.Valid(trimmed) || trimmed[0] != '{') {
			return &Error{Code: CodeInvalidArgs, Message: "invalid arguments: must be a JSON object"}
		}
		return nil
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return &Error{Code: CodeInvalidArgs, Message: "invalid arguments: not valid JSON: " + err.Error()}
	}
	sch, err := d.schema()
	if err != nil {
		return &Error{Code: CodeInvalidSchema, Message: fmt.Sprintf("tool %q has a broken parameters schema: %v", d.Name, err)}
	}
	if msgs := violations(sch, v, "arguments"); msgs != nil {
		return &Error{Code: CodeInvalidArgs, Message: "invalid arguments: " + strings.Join(msgs, "; ")}
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
	collect(ve, v, root, &msgs)
	// Sibling branches (allOf, nested causes) can report the same leaf twice.
	slices.Sort(msgs)
	return slices.Compact(msgs)
}

var printer = message.NewPrinter(language.English)

// collect flattens a validation error tree into readable leaf messages.
func collect(e *jsonschema.ValidationError, inst any, root string, out *[]string) {
	if k, ok := e.ErrorKind.(*kind.OneOf); ok {
		oneOf(e, k, inst, root, out)
		return
	}
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, inst, root, out)
		}
		return
	}
	path := instancePath(inst, e.InstanceLocation)
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

// oneOf says why a value fits no alternative of a oneOf, each
// alternative's violations together ("[a] or [b]"), or which alternatives
// it fits when it fits more than one: listed flat, as the other leaves
// are, the alternatives' demands would read as all required at once.
func oneOf(e *jsonschema.ValidationError, k *kind.OneOf, inst any, root string, out *[]string) {
	subject := root
	if path := instancePath(inst, e.InstanceLocation); path != "" {
		subject = fmt.Sprintf("%q", path)
	}
	if len(k.Subschemas) > 0 {
		n := make([]string, len(k.Subschemas))
		for i, s := range k.Subschemas {
			n[i] = strconv.Itoa(s + 1)
		}
		*out = append(*out, fmt.Sprintf("%s matches oneOf alternatives %s; it must match exactly one", subject, strings.Join(n, " and ")))
		return
	}
	alts := make([]string, 0, len(e.Causes))
	for _, c := range e.Causes {
		var msgs []string
		collect(c, inst, root, &msgs)
		slices.Sort(msgs)
		alts = append(alts, "["+strings.Join(slices.Compact(msgs), ", ")+"]")
	}
	*out = append(*out, fmt.Sprintf("%s matches no oneOf alternative: %s", subject, strings.Join(alts, " or ")))
}

// instancePath names a location in the value the way the model writes it:
// servers[1].host, not servers.1.host. The value is walked alongside the
// location, so an object key that looks like a number stays a key.
func instancePath(v any, loc []string) string {
	var b strings.Builder
	for _, seg := range loc {
		if list, ok := v.([]any); ok {
			b.WriteString("[" + seg + "]")
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(list) {
				v = list[i]
			} else {
				v = nil
			}
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
		if m, ok := v.(map[string]any); ok {
			v = m[seg]
		} else {
			v = nil
		}
	}
	return b.String()
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
