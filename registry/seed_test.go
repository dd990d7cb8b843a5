package registry

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	jsg "github.com/google/jsonschema-go/jsonschema"
)

// The tests in this file state the seed harness's registry behaviour, one
// table per rule.

// TestKnownNamesIsThePreRestrictionUniverse: KnownNames is what Restrict
// validates against, restrictions not applied, run_code never in it.
func TestKnownNamesIsThePreRestrictionUniverse(t *testing.T) {
	tests := []struct {
		name     string
		mode     Mode
		restrict []Restriction
		known    []string
		visible  []string
	}{
		{"native, unrestricted", Native, nil, []string{"a", "b", "mine"}, []string{"a", "b", "mine"}},
		{"a deny keeps the name known", Native, []Restriction{{Deny: []string{"a"}}}, []string{"a", "b", "mine"}, []string{"b", "mine"}},
		{"an allow keeps the rest known", Both, []Restriction{{Allow: []string{"a"}}}, []string{"a", "b", "mine"}, []string{"a", "mine", "run_code"}},
		{"code mode: run_code visible, never known", Code, nil, []string{"a", "b", "mine"}, []string{"a", "b", "mine", "run_code"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New()
			r.Register(def(t, "a", ""))
			r.Register(def(t, "b", ""))
			if err := AddCodeTool(r, codeTool()); err != nil {
				t.Fatal(err)
			}
			s := r.NewScope()
			s.Register(def(t, "mine", ""))
			if err := s.SetMode(tt.mode); err != nil {
				t.Fatal(err)
			}
			for _, rs := range tt.restrict {
				if _, err := s.Restrict(rs); err != nil {
					t.Fatal(err)
				}
			}
			if got := s.KnownNames(); !slices.Equal(got, tt.known) {
				t.Errorf("KnownNames = %v, want %v", got, tt.known)
			}
			if got := visibleNames(s); !slices.Equal(got, tt.visible) {
				t.Errorf("Visible = %v, want %v", got, tt.visible)
			}
			// A restricted-away name is a normal absence: naming it again is fine.
			for _, n := range tt.known {
				if n == "mine" {
					continue
				}
				lift, err := s.Restrict(Restriction{Deny: []string{n}})
				if err != nil {
					t.Errorf("Restrict(deny %s) of a known name: %v", n, err)
				} else {
					lift()
				}
			}
			// A typo fails loud.
			if _, err := s.Restrict(Restriction{Deny: []string{"aa"}}); err == nil || !strings.Contains(err.Error(), `"aa" is not a registered tool`) {
				t.Errorf("Restrict of a typo = %v", err)
			}
		})
	}
}

// TestEmptyAllowListMasksEverything: allow: [] hides every global; only a
// restriction with neither list is refused.
func TestEmptyAllowListMasksEverything(t *testing.T) {
	tests := []struct {
		name    string
		r       Restriction
		err     string
		visible []string
	}{
		{"allow: [] masks every global, not local tools", Restriction{Allow: []string{}}, "", []string{"mine"}},
		{"allow: [] with an empty deny list too", Restriction{Allow: []string{}, Deny: []string{}}, "", []string{"mine"}},
		{"neither list: the materialized empty config", Restriction{}, "empty restriction", []string{"a", "b", "mine"}},
		{"an empty deny list alone", Restriction{Deny: []string{}}, "empty restriction", []string{"a", "b", "mine"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New()
			r.Register(def(t, "a", ""))
			r.Register(def(t, "b", ""))
			s := r.NewScope()
			s.Register(def(t, "mine", ""))
			lift, err := s.Restrict(tt.r)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("Restrict = %v, want error %q", err, tt.err)
			}
			if got := visibleNames(s); !slices.Equal(got, tt.visible) {
				t.Errorf("Visible = %v, want %v", got, tt.visible)
			}
			r.Register(def(t, "later", ""))
			if tt.err == "" && s.Get("later") != nil {
				t.Error("an empty allow list must also mask globals registered later")
			}
			if lift != nil {
				lift()
				if got := visibleNames(s); !slices.Equal(got, []string{"a", "b", "later", "mine"}) {
					t.Errorf("after lifting: %v", got)
				}
			}
		})
	}
}

// TestSchemasAreCopies: a caller that edits a returned schema changes
// nothing the model is offered next time.
func TestSchemasAreCopies(t *testing.T) {
	r := New()
	d, err := Define(Tool[echoIn, string]{Name: "e", Output: json.RawMessage(`{"type":"string"}`),
		Run: func(context.Context, *Call, echoIn) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	r.Register(d)
	want := r.Schemas(nil)
	wantParams, wantOut := string(want[0].Parameters), string(want[0].Output)
	for _, edit := range []struct {
		name string
		f    func(s *Schema)
	}{
		{"parameters bytes", func(s *Schema) { copy(s.Parameters, "XXXXXXXX") }},
		{"output bytes", func(s *Schema) { copy(s.Output, "XXXXXXXX") }},
		{"appended", func(s *Schema) { s.Parameters = append(s.Parameters[:1], '!') }},
	} {
		got := r.Schemas(nil)
		edit.f(&got[0])
		again := r.Schemas(nil)
		if string(again[0].Parameters) != wantParams || string(again[0].Output) != wantOut || string(d.Parameters()) != wantParams {
			t.Errorf("%s: editing a returned schema changed the offer: %s %s", edit.name, again[0].Parameters, again[0].Output)
		}
	}
}

// TestDeclaredSchemaProblemsAreRefused: an enum or const whose values do
// not match the property's type is refused when the tool is defined.
func TestDeclaredSchemaProblemsAreRefused(t *testing.T) {
	tests := []struct {
		name, params, want string
	}{
		{"string enum on a number", `{"type":"object","properties":{"n":{"type":"number","enum":["1","2"]}}}`,
			`"#/properties/n/enum": enum value "1" is not a number; "#/properties/n/enum": enum value "2" is not a number`},
		{"float enum on an integer", `{"type":"object","properties":{"n":{"type":"integer","enum":[1,2.5]}}}`,
			`"#/properties/n/enum": enum value 2.5 is not an integer`},
		{"const of another type, nested", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"boolean","const":"yes"}}}}`,
			`"#/properties/a/items/const": const value "yes" is not a boolean`},
		{"matching values are fine", `{"type":"object","properties":{"n":{"type":"integer","enum":[1,2]},"s":{"type":"string","enum":["a"],"default":3}}}`, ""},
		{"untyped enum is plain JSON Schema", `{"type":"object","properties":{"n":{"enum":[1,"a"]}}}`, ""},
		// The seed refuses a type it does not know when the tool is defined,
		// not at its first call.
		{"unknown type, nested", `{"type":"object","properties":{"n":{"type":"int"}}}`,
			`"#/properties/n/type": unknown type "int"`},
		{"unknown type in a type list", `{"type":"object","properties":{"n":{"type":["string","nil"]}}}`,
			`"#/properties/n/type": unknown type "nil"`},
		{"a type list of known types is fine", `{"type":"object","properties":{"n":{"type":["string","null"]}}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Define(Tool[json.RawMessage, string]{Name: "x", Parameters: json.RawMessage(tt.params),
				Run: func(context.Context, *Call, json.RawMessage) (string, error) { return "", nil }})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Define = %v\nwant it to say %s", err, tt.want)
			}
		})
	}
}

// TestRawSchemaToolsAreNotValidated: an MCP server's tool keeps its schema
// as the model sees it, and its arguments reach the server unchecked.
func TestRawSchemaToolsAreNotValidated(t *testing.T) {
	schema := `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"$schema":"https://example.com/unknown-draft"}`
	var got json.RawMessage
	d, err := Define(Tool[json.RawMessage, string]{Name: "mcp_x", Parameters: json.RawMessage(schema), RawSchema: true,
		ConcurrencySafe: func(json.RawMessage) bool { return true },
		Run:             func(_ context.Context, _ *Call, in json.RawMessage) (string, error) { got = in; return "ran", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Parameters()) != schema {
		t.Fatalf("Parameters = %s", d.Parameters())
	}
	tests := []struct {
		args    string
		invalid bool
		safe    bool
	}{
		{`{"n":"not a number"}`, false, true}, // the server decides
		{`{}`, false, true},
		{``, false, true},
		{`{"n":`, true, false}, // not JSON is still refused: nothing could send it
	}
	for _, tt := range tests {
		err := d.Validate(json.RawMessage(tt.args))
		if (err != nil) != tt.invalid {
			t.Errorf("Validate(%s) = %v, want invalid=%v", tt.args, err, tt.invalid)
		}
		if s := d.ConcurrencySafe(&Call{Args: json.RawMessage(tt.args)}); s != tt.safe {
			t.Errorf("ConcurrencySafe(%s) = %v, want %v", tt.args, s, tt.safe)
		}
	}
	if r, err := d.Run(t.Context(), &Call{Args: json.RawMessage(`{"n":"x"}`)}); err != nil || r.Text() != "ran" || string(got) != `{"n":"x"}` {
		t.Fatalf("Run = %v, %v; the body got %s", r, err, got)
	}
	if _, err := Define(Tool[json.RawMessage, string]{Name: "y", Parameters: json.RawMessage(`{"type":"string"}`), RawSchema: true,
		Run: func(context.Context, *Call, json.RawMessage) (string, error) { return "", nil }}); err == nil {
		t.Error("a raw schema must still be an object schema")
	}
}

// TestInvalidArgumentsAreExclusive: ConcurrencySafe is true only for valid
// arguments the tool calls safe.
func TestInvalidArgumentsAreExclusive(t *testing.T) {
	d, err := Define(Tool[echoIn, string]{Name: "e",
		ConcurrencySafe: func(echoIn) bool { return true },
		Run:             func(context.Context, *Call, echoIn) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args string
		safe bool
	}{
		{`{"text":"a"}`, true},
		{`{}`, false},                         // missing required text
		{`{"text":"a","times":"x"}`, false},   // wrong type, which decode alone also catches
		{`{"text":"a","undeclared":1}`, true}, // extra keys are allowed, as the seed takes them
		{`{"text":"a","times":1.5}`, false},   // ditto: not an integer
		{`not json`, false},
	}
	for _, tt := range tests {
		if got := d.ConcurrencySafe(&Call{Args: json.RawMessage(tt.args)}); got != tt.safe {
			t.Errorf("ConcurrencySafe(%s) = %v, want %v", tt.args, got, tt.safe)
		}
	}
}

// deepSchema nests n object levels: {"type":"object","properties":{"a":...}}.
func deepSchema(n int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat(`}}`, n)
}

// TestDeepSchemasAreBounded: a schema thousands of levels deep (an MCP
// server can send one) gets a clear error, or for a raw schema is accepted,
// without stalling. The bound on the time is generous: without the depth
// limit, 5,000 levels took minutes to compile.
func TestDeepSchemasAreBounded(t *testing.T) {
	run := func(context.Context, *Call, json.RawMessage) (string, error) { return "", nil }
	tests := []struct {
		name   string
		levels int
		raw    bool
		want   string
	}{
		{"declared, 5,000 levels", 5000, false, "nests deeper than 128 levels"},
		{"raw, 5,000 levels", 5000, true, "nests deeper than 128 levels"},
		{"declared, 60 levels", 60, false, ""},
		{"raw, 60 levels", 60, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := Define(Tool[json.RawMessage, string]{Name: "deep", Parameters: json.RawMessage(deepSchema(tt.levels)), RawSchema: tt.raw, Run: run})
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("Define = %v, want %q", err, tt.want)
			}
			_, serr := CompileStructured(json.RawMessage(deepSchema(tt.levels)))
			if (serr != nil) != (tt.levels > 64) {
				t.Fatalf("CompileStructured = %v", serr)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Fatalf("took %s", took)
			}
		})
	}
}

// BenchmarkDeepSchema is the cost of refusing a 5,000-level schema.
func BenchmarkDeepSchema(b *testing.B) {
	raw := json.RawMessage(deepSchema(5000))
	run := func(context.Context, *Call, json.RawMessage) (string, error) { return "", nil }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Define(Tool[json.RawMessage, string]{Name: "deep", Parameters: raw, Run: run}); err == nil {
			b.Fatal("accepted")
		}
	}
}

// TestNormalize: a value that did not come from this call's body is checked
// against the output schema and re-rendered, content and meta, for the
// call's arguments.
func TestNormalize(t *testing.T) {
	type out struct {
		State string `json:"state" enum:"ok,failed"`
		N     int    `json:"n"`
	}
	d, err := Define(Tool[echoIn, out]{Name: "n",
		Run:    func(context.Context, *Call, echoIn) (out, error) { return out{State: "ok"}, nil },
		Render: func(in echoIn, o out) []Content { return []Content{Text(in.Text + ":" + o.State)} },
		Meta:   func(_ echoIn, o out) any { return map[string]int{"n": o.N} },
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		value any
		text  string
		meta  string
		code  string
	}{
		{"the tool's own type", out{State: "failed", N: 2}, "hi:failed", `{"n":2}`, ""},
		{"a map of the same shape", map[string]any{"state": "ok", "n": 3}, "hi:ok", `{"n":3}`, ""},
		{"outside the enum", out{State: "maybe"}, "", "", CodeInvalidOutput},
		{"another shape", map[string]any{"other": 1}, "", "", CodeInvalidOutput},
		{"not JSON", func() {}, "", "", CodeInvalidOutput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := d.Normalize(&Call{Args: json.RawMessage(`{"text":"hi"}`)}, tt.value)
			if tt.code != "" {
				var te *Error
				if !errors.As(err, &te) || te.Code != tt.code {
					t.Fatalf("Normalize = %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil || r.Text() != tt.text || string(r.Meta) != tt.meta {
				t.Fatalf("Normalize = %+v, %v", r, err)
			}
			if _, ok := r.Value.(out); !ok {
				t.Fatalf("Value is %T, want the tool's output type", r.Value)
			}
		})
	}
}

// TestFinalizeAndMeta: a finalize returning nothing keeps the content; meta
// that is not JSON fails the call as INVALID_TOOL_OUTPUT.
func TestFinalizeAndMeta(t *testing.T) {
	tests := []struct {
		name     string
		finalize func(*Call, Result) []Content
		meta     func(echoIn, string) any
		text     string
		code     string
	}{
		{"finalize returns nil", func(*Call, Result) []Content { return nil }, nil, "body", ""},
		{"finalize returns empty", func(*Call, Result) []Content { return []Content{} }, nil, "", ""},
		{"finalize replaces", func(*Call, Result) []Content { return []Content{Text("final")} }, nil, "final", ""},
		{"meta is not JSON", nil, func(echoIn, string) any { return map[string]any{"f": func() {}} }, "", CodeInvalidToolOutput},
		{"meta is invalid raw JSON", nil, func(echoIn, string) any { return json.RawMessage(`{`) }, "", CodeInvalidToolOutput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Define(Tool[echoIn, string]{Name: "f", Finalize: tt.finalize, Meta: tt.meta,
				Run: func(context.Context, *Call, echoIn) (string, error) { return "body", nil }})
			if err != nil {
				t.Fatal(err)
			}
			r, err := d.Run(t.Context(), &Call{Args: json.RawMessage(`{"text":"a"}`)})
			if tt.code != "" {
				var te *Error
				if !errors.As(err, &te) || te.Code != tt.code {
					t.Fatalf("Run = %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Finalize(&Call{}, r).Text(); got != tt.text {
				t.Fatalf("after finalize %q, want %q", got, tt.text)
			}
		})
	}
}

// TestExtraKeysAreAllowed: a typed tool takes its arguments as the seed
// takes them: extra keys, at the root or nested, neither fail the call nor
// reach the body, and the schema offered to the model does not forbid
// them. A tool that wants them refused says so in its schema.
func TestExtraKeysAreAllowed(t *testing.T) {
	type inner struct {
		N int `json:"n"`
	}
	type in struct {
		Text  string  `json:"text"`
		Items []inner `json:"items,omitempty"`
	}
	closed := func(s *jsg.Schema) { s.AdditionalProperties = &jsg.Schema{Not: &jsg.Schema{}} }
	tests := []struct {
		name   string
		schema func(*jsg.Schema)
		args   string
		want   string // the error, "" for a call that runs
	}{
		{"declared keys only", nil, `{"text":"a","items":[{"n":1}]}`, ""},
		{"a stray key at the root", nil, `{"text":"a","path":"x"}`, ""},
		{"a stray key nested", nil, `{"text":"a","items":[{"n":1,"why":"because"}]}`, ""},
		{"a wrong type still fails", nil, `{"text":1,"extra":true}`, `invalid arguments: "text" must be a string`},
		{"a tool that closes its root refuses them", closed, `{"text":"a","path":"x"}`,
			`invalid arguments: "path" is not a declared property (additionalProperties: false)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got in
			d, err := Define(Tool[in, string]{Name: "t", Schema: tt.schema,
				Run: func(_ context.Context, _ *Call, v in) (string, error) { got = v; return "ran", nil }})
			if err != nil {
				t.Fatal(err)
			}
			if tt.schema == nil && strings.Contains(string(d.Parameters()), "additionalProperties") {
				t.Errorf("offered schema forbids extras: %s", d.Parameters())
			}
			r, err := d.Run(t.Context(), &Call{Args: json.RawMessage(tt.args)})
			if tt.want != "" {
				if err != nil || !r.IsError || r.Code != CodeInvalidArgs || r.Text() != "Error: "+tt.want {
					t.Fatalf("Run = %+v, %v; want %s", r, err, tt.want)
				}
				return
			}
			if err != nil || r.Text() != "ran" || got.Text != "a" {
				t.Fatalf("Run = %v, %v; body got %+v", r, err, got)
			}
		})
	}
}
