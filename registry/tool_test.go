package registry

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	jsg "github.com/google/jsonschema-go/jsonschema"
)

type echoIn struct {
	Text  string `json:"text" jsonschema:"what to echo"`
	Times int    `json:"times,omitempty"`
}

func TestDefineRefusesBadDefinitions(t *testing.T) {
	run := func(context.Context, *Call, echoIn) (string, error) { return "", nil }
	tests := []struct {
		name string
		tool Tool[echoIn, string]
		want string
	}{
		{"no name", Tool[echoIn, string]{Run: run}, "without a name"},
		{"bad name", Tool[echoIn, string]{Name: "a b", Run: run}, "use letters"},
		{"too long", Tool[echoIn, string]{Name: strings.Repeat("x", 65), Run: run}, "at most 64"},
		{"reserved", Tool[echoIn, string]{Name: "run_code", Run: run}, "reserved"},
		{"no run", Tool[echoIn, string]{Name: "x"}, "has no Run"},
		{"params not JSON", Tool[echoIn, string]{Name: "x", Run: run, Parameters: json.RawMessage(`{`)}, "not JSON"},
		{"params not object", Tool[echoIn, string]{Name: "x", Run: run, Parameters: json.RawMessage(`{"type":"string"}`)}, "must be an object schema"},
		{"params an array", Tool[echoIn, string]{Name: "x", Run: run, Parameters: json.RawMessage(`[]`)}, "must be an object schema"},
		{"output outside subset", Tool[echoIn, string]{Name: "x", Run: run, Output: json.RawMessage(`{"type":"string","pattern":"a"}`)}, `keyword "pattern" is not supported`},
		{"negative timeout", Tool[echoIn, string]{Name: "x", Run: run, Timeout: -time.Second}, "negative timeout"},
		{"negative retry", Tool[echoIn, string]{Name: "x", Run: run, Retry: RetryPolicy{Attempts: -1}}, "negative retry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Define(tt.tool)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Define error = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// A parameters schema is compiled at its first call, not at start: one
// that breaks the metaschema fails every call, naming the tool.
func TestBrokenSchemaFailsAtFirstCall(t *testing.T) {
	d, err := Define(Tool[echoIn, string]{Name: "x", Run: func(context.Context, *Call, echoIn) (string, error) { return "", nil },
		Parameters: json.RawMessage(`{"type":"object","required":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		var e *Error
		if err := d.Validate(json.RawMessage(`{}`)); !errors.As(err, &e) || e.Code != CodeInvalidSchema || !strings.Contains(e.Message, `tool "x"`) {
			t.Fatalf("Validate = %v, want INVALID_SCHEMA naming the tool", err)
		}
	}
}

// A derived schema that cannot be marshalled (here an adjustment put a
// func in it) is found at first use: the tool is not offered to the model,
// its calls fail with INVALID_SCHEMA, and Check names it.
func TestUnmarshallableDerivedSchemaIsNotOffered(t *testing.T) {
	run := func(context.Context, *Call, echoIn) (string, error) { return "", nil }
	r := New()
	MustAdd(r, Tool[echoIn, string]{Name: "bad", Run: run, Schema: func(s *jsg.Schema) { s.Extra = map[string]any{"x": func() {}} }})
	MustAdd(r, Tool[echoIn, string]{Name: "good", Run: run})
	var names []string
	for _, s := range r.Schemas(nil) {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"good"}) {
		t.Fatalf("offered %v, want only good", names)
	}
	d := r.Get("bad", nil)
	if err := d.Check(); err == nil || !strings.Contains(err.Error(), `tool "bad"`) {
		t.Fatalf("Check = %v, want an error naming the tool", err)
	}
	if d.Parameters() != nil {
		t.Fatalf("Parameters = %s, want nil", d.Parameters())
	}
	var e *Error
	if err := d.Validate(json.RawMessage(`{"text":"a"}`)); !errors.As(err, &e) || e.Code != CodeInvalidSchema {
		t.Fatalf("Validate = %v, want INVALID_SCHEMA", err)
	}
	if err := r.Get("good", nil).Check(); err != nil {
		t.Fatalf("good: Check = %v", err)
	}
}

func TestDefineRefusesUnsupportedParameterTypes(t *testing.T) {
	type bad struct {
		C chan int `json:"c"`
	}
	_, err := Define(Tool[bad, string]{Name: "x", Run: func(context.Context, *Call, bad) (string, error) { return "", nil }})
	if err == nil || !strings.Contains(err.Error(), "chan int is unsupported") {
		t.Fatalf("err = %v", err)
	}
	_, err = Define(Tool[int, string]{Name: "x", Run: func(context.Context, *Call, int) (string, error) { return "", nil }})
	if err == nil || !strings.Contains(err.Error(), "must be a struct") {
		t.Fatalf("err = %v", err)
	}
}

func TestSchemaForDerivesFromTags(t *testing.T) {
	type inner struct {
		N float64 `json:"n"`
	}
	type in struct {
		Path  string            `json:"path" jsonschema:"the file"`
		Mode  string            `json:"mode,omitempty" enum:"r,w"`
		Tags  []string          `json:"tags,omitzero"`
		Opt   *int              `json:"opt"`
		Sub   inner             `json:"sub"`
		Env   map[string]string `json:"env,omitempty"`
		Any   any               `json:"any,omitempty"`
		Skip  string            `json:"-"`
		plain string            //lint:ignore U1000 an unexported field the schema must skip
	}
	d, err := Define(Tool[in, string]{Name: "x", Run: func(context.Context, *Call, in) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	raw := d.Parameters()
	// jsonschema-go's derivation: structs closed, fields in declaration
	// order, a pointer required unless omitempty; nullable types name their
	// one type, and enum tags are added.
	want := `{"type":"object","properties":{"path":{"type":"string","description":"the file"},"mode":{"type":"string","enum":["r","w"]},` +
		`"tags":{"type":"array","items":{"type":"string"}},"opt":{"type":"integer"},` +
		`"sub":{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]},` +
		`"env":{"type":"object","additionalProperties":{"type":"string"}},"any":true},"required":["path","opt","sub"]}`
	if string(raw) != want {
		t.Fatalf("schema\n got %s\nwant %s", raw, want)
	}
}

func TestValidateListsEveryViolation(t *testing.T) {
	d, err := Define(Tool[json.RawMessage, string]{
		Name: "v",
		Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,
			"properties":{
				"x":{"type":"string"},
				"mode":{"enum":["a","b"]},
				"kind":{"const":"k"},
				"a":{"type":"object","properties":{"b":{"type":"string"},"c":{"type":"integer","minimum":1}},"required":["need"]},
				"list":{"type":"array","items":{"type":"integer"}}
			},
			"required":["x"]}`),
		Run: func(context.Context, *Call, json.RawMessage) (string, error) { return "", nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args, want string
	}{
		{"valid", `{"x":"s"}`, ""},
		{"empty args count as {}", ``, `invalid arguments: missing required property "x"`},
		{"not JSON", `{"x":`, "invalid arguments: not valid JSON"},
		{"root type", `[1]`, "invalid arguments: arguments must be an object"},
		{"missing", `{}`, `invalid arguments: missing required property "x"`},
		{"nested type", `{"x":"s","a":{"b":1,"need":0}}`, `invalid arguments: "a.b" must be a string`},
		{"nested required", `{"x":"s","a":{}}`, `invalid arguments: missing required property "a.need"`},
		{"enum", `{"x":"s","mode":"c"}`, `invalid arguments: "mode" must be one of ["a","b"]`},
		{"const", `{"x":"s","kind":"j"}`, `invalid arguments: "kind" must be "k"`},
		{"undeclared", `{"x":"s","y":1}`, `invalid arguments: "y" is not a declared property (additionalProperties: false)`},
		{"array item", `{"x":"s","list":[1,"two"]}`, `invalid arguments: "list[1]" must be an integer`},
		{"other keyword", `{"x":"s","a":{"need":1,"c":0}}`, `invalid arguments: "a.c": minimum: got 0, want 1`},
		{"all at once", `{"x":1,"mode":"c","y":true,"a":{"b":2}}`,
			`invalid arguments: "a.b" must be a string; "mode" must be one of ["a","b"]; "x" must be a string; "y" is not a declared property (additionalProperties: false); missing required property "a.need"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := d.Validate(json.RawMessage(tt.args))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var te *Error
			if !errors.As(err, &te) || te.Code != "INVALID_ARGS" {
				t.Fatalf("Validate = %#v, want an INVALID_ARGS *Error", err)
			}
			if !strings.HasPrefix(te.Message, tt.want) {
				t.Fatalf("message\n got %s\nwant %s", te.Message, tt.want)
			}
		})
	}
}

func TestRunRendersValueAndMeta(t *testing.T) {
	type out struct {
		N int `json:"n"`
	}
	d, err := Define(Tool[echoIn, out]{
		Name: "count",
		Run:  func(_ context.Context, _ *Call, in echoIn) (out, error) { return out{N: len(in.Text)}, nil },
		Meta: func(in echoIn, o out) any { return map[string]int{"len": o.N} },
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Run(t.Context(), &Call{Args: json.RawMessage(`{"text":"abc"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Text() != `{"n":3}` || string(r.Meta) != `{"len":3}` || r.Value.(out).N != 3 {
		t.Fatalf("result = %+v", r)
	}
	if string(d.Output()) != `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}` {
		t.Fatalf("derived output schema = %s", d.Output())
	}
}

func TestOutputIsValidated(t *testing.T) {
	type status struct {
		State string `json:"state" enum:"ok,failed"`
	}
	tests := []struct {
		name     string
		def      func() (*Def, error)
		wantCode string
		wantMsg  string
	}{
		{"declared schema, bad value", func() (*Def, error) {
			return Define(Tool[echoIn, map[string]any]{Name: "d",
				Output: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"m":{"type":"string"}},"required":["n","m"]}`),
				Run: func(context.Context, *Call, echoIn) (map[string]any, error) {
					return map[string]any{"n": "x"}, nil
				}})
		}, "INVALID_OUTPUT", `invalid output: "n" must be an integer; missing required property "m"`},
		{"declared schema, good value", func() (*Def, error) {
			return Define(Tool[echoIn, map[string]any]{Name: "d",
				Output: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
				Run: func(context.Context, *Call, echoIn) (map[string]any, error) {
					return map[string]any{"n": 1}, nil
				}})
		}, "", ""},
		{"derived enum", func() (*Def, error) {
			return Define(Tool[echoIn, status]{Name: "d",
				Run: func(context.Context, *Call, echoIn) (status, error) { return status{State: "maybe"}, nil }})
		}, "INVALID_OUTPUT", `invalid output: "state" must be one of ["ok","failed"]`},
		{"scalar output", func() (*Def, error) {
			return Define(Tool[echoIn, string]{Name: "d", Output: json.RawMessage(`{"type":"string","enum":["yes"]}`),
				Run: func(context.Context, *Call, echoIn) (string, error) { return "no", nil }})
		}, "INVALID_OUTPUT", `invalid output: output must be one of ["yes"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.def()
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Run(t.Context(), &Call{Args: json.RawMessage(`{"text":"a"}`)})
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("Run = %v", err)
				}
				return
			}
			var te *Error
			if !errors.As(err, &te) || te.Code != tt.wantCode || te.Message != tt.wantMsg {
				t.Fatalf("Run error = %v, want %s %q", err, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestPresentersAreSoftAndContained(t *testing.T) {
	d, err := Define(Tool[echoIn, string]{
		Name: "p",
		Run:  func(context.Context, *Call, echoIn) (string, error) { return "", nil },
		PresentCall: func(in echoIn) View {
			if in.Text == "boom" {
				panic("presenter bug")
			}
			return GenericCard{Title: in.Text}
		},
		PresentResult: func(in echoIn, r Result) View { return GenericCard{Title: in.Text + r.Text()} },
		ConcurrencySafe: func(in echoIn) bool {
			if in.Text == "boom" {
				panic("x")
			}
			return in.Text == "safe"
		},
		Finalize: func(c *Call, r Result) []Content { return append(r.Content, Text("!")) },
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args string
		call View
		safe bool
	}{
		{`{"text":"a"}`, GenericCard{Title: "a"}, false},
		{`{"text":"safe"}`, GenericCard{Title: "safe"}, true},
		{`{"text":1}`, nil, false},      // an old log's arguments: no view, no error
		{`{"text":"boom"}`, nil, false}, // a crashing presenter: no view
		{`not json`, nil, false},
	}
	for _, tt := range tests {
		if got := d.PresentCall(json.RawMessage(tt.args)); cmp.Diff(got, tt.call) != "" {
			t.Errorf("PresentCall(%s) = %#v, want %#v", tt.args, got, tt.call)
		}
		if got := d.ConcurrencySafe(&Call{Args: json.RawMessage(tt.args)}); got != tt.safe {
			t.Errorf("ConcurrencySafe(%s) = %v, want %v", tt.args, got, tt.safe)
		}
	}
	if v := d.PresentResult(json.RawMessage(`{"text":"a"}`), Result{Content: []Content{Text("b")}}); cmp.Diff(v, GenericCard{Title: "ab"}) != "" {
		t.Errorf("PresentResult = %#v", v)
	}
	if r := d.Finalize(&Call{}, Result{Content: []Content{Text("x")}}); r.Text() != "x!" {
		t.Errorf("Finalize = %q", r.Text())
	}
	var nilDef *Def
	if nilDef.PresentCall(nil) != nil || nilDef.PresentResult(nil, Result{}) != nil {
		t.Error("a nil Def must present nothing")
	}
}
