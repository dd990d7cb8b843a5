package codemode

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
)

// Bounds that keep the converter total and stack-safe on any input: deeper
// schema nesting renders as `unknown` instead of recursing further.
const (
	maxSchemaParseDepth = 128
	maxTypeDepth        = 32
)

// SchemaToTS renders a JSON Schema as a TypeScript type. It is total: it
// never fails and never panics; whatever it cannot express (unparseable
// JSON, $ref, not, conditionals, nesting past a bound, non-literal enum
// members) becomes `unknown`. integer maps to number, enum and const to
// literal unions, a schema with no type constraint to JsonValue. depth is the
// indentation level at which the type is written.
func SchemaToTS(schema json.RawMessage, depth int) (ts string) {
	defer func() {
		if recover() != nil {
			ts = "unknown"
		}
	}()
	if len(bytes.TrimSpace(schema)) == 0 {
		return "unknown"
	}
	n, err := parseNode(schema)
	if err != nil {
		return "unknown"
	}
	s, _ := toTS(n, depth, 0)
	return s
}

// node is a parsed JSON value that keeps object key order, so the rendered
// properties follow the schema as written.
type node struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null, 'x' too deep
	keys  []string
	vals  []*node
	items []*node
	str   string // string value, or the number's text
	b     bool
}

func (n *node) get(k string) *node {
	if n == nil || n.kind != 'o' {
		return nil
	}
	if i := slices.Index(n.keys, k); i >= 0 {
		return n.vals[i]
	}
	return nil
}

func parseNode(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return n, nil
}

var errTrailing = &json.SyntaxError{}

func parseValue(dec *json.Decoder, depth int) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	return parseFrom(dec, tok, depth)
}

func parseFrom(dec *json.Decoder, tok json.Token, depth int) (*node, error) {
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxSchemaParseDepth {
			return &node{kind: 'x'}, skip(dec)
		}
		if t == '{' {
			n := &node{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, k), append(n.vals, v)
			}
			_, err := dec.Token()
			return n, err
		}
		n := &node{kind: 'a'}
		for dec.More() {
			v, err := parseValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		_, err := dec.Token()
		return n, err
	case string:
		return &node{kind: 's', str: t}, nil
	case json.Number:
		return &node{kind: 'n', str: t.String()}, nil
	case bool:
		return &node{kind: 'b', b: t}, nil
	case nil:
		return &node{kind: 'z'}, nil
	}
	return nil, errTrailing
}

// skip consumes the rest of an object or array iteratively.
func skip(dec *json.Decoder) error {
	for open := 1; open > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				open++
			} else {
				open--
			}
		}
	}
	return nil
}

// Operator precedence of a rendered type, so members get parentheses only
// where TypeScript needs them.
const (
	precAtom = iota
	precIntersection
	precUnion
)

func toTS(n *node, depth, level int) (string, int) {
	if n == nil || level > maxTypeDepth {
		return "unknown", precAtom
	}
	switch n.kind {
	case 'b':
		if n.b {
			return "JsonValue", precAtom
		}
		return "never", precAtom
	case 'o':
	default:
		return "unknown", precAtom
	}
	for _, k := range []string{"$ref", "not", "if", "then", "else", "patternProperties", "dependentSchemas"} {
		if n.get(k) != nil {
			return "unknown", precAtom
		}
	}
	if c := n.get("const"); c != nil {
		if lit, ok := literal(c); ok {
			return lit, precAtom
		}
		return "unknown", precAtom
	}
	if e := n.get("enum"); e != nil {
		if e.kind != 'a' {
			return "unknown", precAtom
		}
		var lits []string
		for _, it := range e.items {
			lit, ok := literal(it)
			if !ok {
				return "unknown", precAtom
			}
			lits = append(lits, lit)
		}
		return union(lits)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts := n.get(k); alts != nil {
			if alts.kind != 'a' || len(alts.items) == 0 {
				return "unknown", precAtom
			}
			var parts []string
			for _, a := range alts.items {
				s, _ := toTS(a, depth, level+1)
				parts = append(parts, s)
			}
			return union(parts)
		}
	}
	if all := n.get("allOf"); all != nil {
		if all.kind != 'a' || len(all.items) == 0 {
			return "unknown", precAtom
		}
		var parts []string
		for _, a := range all.items {
			s, p := toTS(a, depth, level+1)
			parts = append(parts, wrap(s, p, precIntersection))
		}
		parts = dedupe(parts)
		if len(parts) == 1 {
			return parts[0], precAtom
		}
		return strings.Join(parts, " & "), precIntersection
	}
	t := n.get("type")
	switch {
	case t == nil:
		if n.get("properties") != nil || n.get("additionalProperties") != nil {
			return object(n, depth, level), precAtom
		}
		if n.get("items") != nil || n.get("prefixItems") != nil {
			return array(n, depth, level), precAtom
		}
		return "JsonValue", precAtom
	case t.kind == 's':
		return typeName(t.str, n, depth, level), precAtom
	case t.kind == 'a' && len(t.items) > 0:
		var parts []string
		for _, it := range t.items {
			if it.kind != 's' {
				return "unknown", precAtom
			}
			parts = append(parts, typeName(it.str, n, depth, level))
		}
		return union(parts)
	}
	return "unknown", precAtom
}

func typeName(t string, n *node, depth, level int) string {
	switch t {
	case "string", "number", "boolean", "null":
		return t
	case "integer":
		return "number"
	case "array":
		return array(n, depth, level)
	case "object":
		return object(n, depth, level)
	}
	return "unknown"
}

func array(n *node, depth, level int) string {
	tuple := n.get("prefixItems")
	if tuple == nil {
		if it := n.get("items"); it != nil && it.kind == 'a' {
			tuple = it // the older tuple form
		}
	}
	if tuple != nil {
		if tuple.kind != 'a' {
			return "unknown[]"
		}
		var parts []string
		for _, it := range tuple.items {
			s, _ := toTS(it, depth, level+1)
			parts = append(parts, s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	it := n.get("items")
	if it == nil {
		return "JsonValue[]"
	}
	s, p := toTS(it, depth, level+1)
	return wrap(s, p, precAtom) + "[]"
}

func object(n *node, depth, level int) string {
	props := n.get("properties")
	if props != nil && props.kind != 'o' {
		return "unknown"
	}
	required := map[string]bool{}
	if r := n.get("required"); r != nil && r.kind == 'a' {
		for _, it := range r.items {
			if it.kind == 's' {
				required[it.str] = true
			}
		}
	}
	var members []string
	if props != nil {
		for i, k := range props.keys {
			p := props.vals[i]
			if d := p.get("description"); d != nil && d.kind == 's' {
				if doc := docComment(d.str, depth+1); doc != "" {
					members = append(members, doc)
				}
			}
			opt := "?"
			if required[k] {
				opt = ""
			}
			s, _ := toTS(p, depth+1, level+1)
			members = append(members, indent(depth+1)+tsKey(k)+opt+": "+s+";")
		}
	}
	// An index signature must admit every declared property's type, so a
	// typed one is only exact when there are no declared properties.
	open := false
	switch ap := n.get("additionalProperties"); {
	case ap != nil && ap.kind == 'b' && !ap.b:
	case len(members) > 0 && ap == nil:
		// Open by default. At the root (a tool's arguments) the type says
		// so, as the seed renders it: a program may pass more than the
		// declared properties. Nested, the declared ones are what counts.
		open = level == 0
	case len(members) > 0:
		members = append(members, indent(depth+1)+"[key: string]: unknown;")
	case ap == nil || ap.kind == 'b':
		return "{ [key: string]: JsonValue }"
	default:
		s, _ := toTS(ap, depth, level+1)
		return "{ [key: string]: " + s + " }"
	}
	if len(members) == 0 {
		return "Record<string, never>"
	}
	obj := "{\n" + strings.Join(members, "\n") + "\n" + indent(depth) + "}"
	if open {
		obj += " & Record<string, JsonValue>"
	}
	return obj
}

func literal(n *node) (string, bool) {
	switch n.kind {
	case 's':
		q, _ := json.Marshal(n.str)
		return string(q), true
	case 'n':
		return n.str, true
	case 'b':
		if n.b {
			return "true", true
		}
		return "false", true
	case 'z':
		return "null", true
	}
	return "", false
}

func union(parts []string) (string, int) {
	parts = dedupe(parts)
	switch {
	case len(parts) == 0:
		return "never", precAtom
	case slices.Contains(parts, "unknown"):
		return "unknown", precAtom
	case len(parts) == 1:
		return parts[0], precAtom
	}
	return strings.Join(parts, " | "), precUnion
}

func dedupe(parts []string) []string {
	var out []string
	for _, p := range parts {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func wrap(s string, prec, max int) string {
	if prec > max {
		return "(" + s + ")"
	}
	return s
}
