package codemode

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// maxDepth bounds the nesting of a value crossing the JSON boundary, so a
// hostile program cannot exhaust the host's stack.
const maxDepth = 1000

// lossyError says why a value does not survive JSON.
type lossyError struct {
	path []string
	why  string
}

func (e *lossyError) Error() string {
	return strings.Join(e.path, "") + " " + e.why
}

// exporter writes a goja value as JSON, refusing anything JSON would not
// carry back unchanged: undefined, functions, symbols, BigInt, NaN and the
// infinities, -0, lone surrogates, cycles, sparse arrays, extra or hidden
// properties, and objects other than plain ones and arrays.
type exporter struct {
	objectProto, arrayProto *goja.Object
	buf                     []byte
	ancestors               []*goja.Object
	path                    []string
}

func (x *exporter) fail(why string) error {
	return &lossyError{path: append([]string(nil), x.path...), why: why}
}

// export writes v as JSON; root names it in error messages. The returned
// bytes are reused by the next export.
func (x *exporter) export(v goja.Value, root string) ([]byte, error) {
	x.buf, x.ancestors, x.path = x.buf[:0], x.ancestors[:0], append(x.path[:0], root)
	if err := x.value(v); err != nil {
		return nil, err
	}
	return x.buf, nil
}

func (x *exporter) value(v goja.Value) error {
	if v == nil || goja.IsUndefined(v) {
		return x.fail("is undefined")
	}
	if goja.IsNull(v) {
		x.buf = append(x.buf, "null"...)
		return nil
	}
	if obj, ok := v.(*goja.Object); ok {
		return x.object(obj)
	}
	if _, ok := v.(*goja.Symbol); ok {
		return x.fail("is a symbol")
	}
	switch e := v.Export().(type) {
	case bool:
		x.buf = strconv.AppendBool(x.buf, e)
	case int64:
		x.buf = strconv.AppendInt(x.buf, e, 10)
	case float64:
		switch {
		case math.IsNaN(e) || math.IsInf(e, 0):
			return x.fail("is " + v.String() + ", which JSON cannot represent")
		case e == 0 && math.Signbit(e):
			return x.fail("is -0, which JSON turns into 0")
		}
		x.buf = appendFloat(x.buf, e)
	case string:
		if s, ok := v.(goja.String); ok && strings.ContainsRune(e, utf8.RuneError) && loneSurrogate(s) {
			return x.fail("is a string with a lone surrogate")
		}
		x.buf = appendString(x.buf, e)
	case *big.Int:
		return x.fail("is a BigInt")
	default:
		return x.fail("is not a JSON value")
	}
	return nil
}

func (x *exporter) object(obj *goja.Object) error {
	if _, ok := goja.AssertFunction(obj); ok {
		return x.fail("is a function")
	}
	for _, a := range x.ancestors {
		if a == obj {
			return x.fail("is a cycle back to an enclosing value")
		}
	}
	if len(x.ancestors) >= maxDepth {
		return x.fail("is nested more than " + strconv.Itoa(maxDepth) + " levels deep")
	}
	if len(obj.Symbols()) > 0 {
		return x.fail("has symbol-keyed properties, which JSON drops")
	}
	x.ancestors = append(x.ancestors, obj)
	defer func() { x.ancestors = x.ancestors[:len(x.ancestors)-1] }()
	proto := obj.Prototype()
	switch {
	case obj.ClassName() == "Array" && proto == x.arrayProto:
		return x.array(obj)
	case obj.ClassName() == "Object" && (proto == nil || proto == x.objectProto):
		return x.plain(obj)
	}
	return x.fail("is a " + describe(obj) + ", not a plain object or array")
}

func (x *exporter) array(obj *goja.Object) error {
	n := obj.Get("length").ToInteger()
	keys := obj.Keys()
	if int64(len(keys)) != n {
		if int64(len(keys)) < n {
			return x.fail("is a sparse array")
		}
		return x.fail("is an array with extra properties")
	}
	// GetOwnPropertyNames adds "length" and any hidden index to Keys.
	if int64(len(obj.GetOwnPropertyNames())) != n+1 {
		return x.fail("is an array with non-enumerable properties")
	}
	x.buf = append(x.buf, '[')
	for i := range n {
		k := strconv.FormatInt(i, 10)
		if keys[i] != k {
			return x.fail("is a sparse array")
		}
		if i > 0 {
			x.buf = append(x.buf, ',')
		}
		x.path = append(x.path, "["+k+"]")
		if err := x.value(obj.Get(k)); err != nil {
			return err
		}
		x.path = x.path[:len(x.path)-1]
	}
	x.buf = append(x.buf, ']')
	return nil
}

func (x *exporter) plain(obj *goja.Object) error {
	keys := obj.Keys()
	if len(obj.GetOwnPropertyNames()) != len(keys) {
		return x.fail("has non-enumerable properties, which JSON drops")
	}
	x.buf = append(x.buf, '{')
	for i, k := range keys {
		if i > 0 {
			x.buf = append(x.buf, ',')
		}
		x.buf = appendString(x.buf, k)
		x.buf = append(x.buf, ':')
		x.path = append(x.path, pathKey(k))
		if err := x.value(obj.Get(k)); err != nil {
			return err
		}
		x.path = x.path[:len(x.path)-1]
	}
	x.buf = append(x.buf, '}')
	return nil
}

func describe(obj *goja.Object) string {
	if c := obj.ClassName(); c != "Object" {
		return c + " object"
	}
	if p := obj.Prototype(); p != nil {
		if ctor, ok := p.Get("constructor").(*goja.Object); ok {
			if name := ctor.Get("name"); name != nil && name.String() != "" {
				return name.String() + " instance"
			}
		}
	}
	return "class instance"
}

func pathKey(k string) string {
	if isIdentifier(k) {
		return "." + k
	}
	return "[" + strconv.Quote(k) + "]"
}

func loneSurrogate(s goja.String) bool {
	n := s.Length()
	for i := 0; i < n; i++ {
		c := s.CharAt(i)
		switch {
		case c >= 0xD800 && c <= 0xDBFF:
			if i+1 >= n {
				return true
			}
			if d := s.CharAt(i + 1); d < 0xDC00 || d > 0xDFFF {
				return true
			}
			i++
		case c >= 0xDC00 && c <= 0xDFFF:
			return true
		}
	}
	return false
}

// appendFloat formats f as JavaScript's Number#toString does for finite
// values, so a value exported and parsed again is the same number.
func appendFloat(b []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	// Go writes e-07 where JavaScript writes e-7.
	if n := len(b); n-start >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // cannot fail for a string
	return append(b, q...)
}
