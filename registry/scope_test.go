package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// def defines a trivial tool; tag distinguishes definitions of one name.
func def(t testing.TB, name, tag string) *Def {
	t.Helper()
	d, err := Define(Tool[struct{}, string]{Name: name, Description: tag,
		Run: func(context.Context, *Call, struct{}) (string, error) { return tag, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func codeTool() Tool[struct{}, string] {
	return Tool[struct{}, string]{Run: func(context.Context, *Call, struct{}) (string, error) { return "", nil }}
}

// reservedDef is a definition named run_code, made the only way one can be.
func reservedDef(t testing.TB) *Def {
	t.Helper()
	ct := codeTool()
	ct.Name = CodeToolName
	d, err := define(ct)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func names(ds []*Def) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Name+"/"+d.Description)
	}
	return out
}

func TestScopesShadowAndUnregister(t *testing.T) {
	r := New()
	unA, err := r.Register(def(t, "a", "global"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(def(t, "a", "again")); err == nil || !strings.Contains(err.Error(), "already registered globally") {
		t.Fatalf("duplicate global: %v", err)
	}
	r.Register(def(t, "b", "global"))
	s1, s2 := r.NewScope(), r.NewScope()
	unLocal, err := s1.Register(def(t, "a", "local"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Register(def(t, "a", "again")); err == nil || !strings.Contains(err.Error(), "already registered in this scope") {
		t.Fatalf("duplicate local: %v", err)
	}
	if got := names(s1.Visible()); !slices.Equal(got, []string{"a/local", "b/global"}) {
		t.Fatalf("s1 sees %v", got)
	}
	if got := names(s2.Visible()); !slices.Equal(got, []string{"a/global", "b/global"}) {
		t.Fatalf("s2 sees %v", got)
	}
	if s1.Get("a").Description != "local" || r.Get("a", nil).Description != "global" {
		t.Fatal("Get disagrees with Visible")
	}
	unLocal()
	unLocal() // idempotent
	if s1.Get("a").Description != "global" {
		t.Fatal("unregistering the local tool must uncover the global one")
	}
	// An unregister function removes only its own definition.
	unA()
	again, _ := r.Register(def(t, "a", "second"))
	unA()
	if r.Get("a", nil) == nil || r.Get("a", nil).Description != "second" {
		t.Fatal("a stale unregister removed a newer definition")
	}
	again()
	if r.Get("a", nil) != nil || s1.Get("a") != nil {
		t.Fatal("a still visible after unregister")
	}
	if _, err := r.Register(nil); err == nil {
		t.Fatal("registering nil must fail")
	}
}

func TestRestrictRefusals(t *testing.T) {
	r := New()
	r.Register(def(t, "a", ""))
	r.Register(def(t, "b", ""))
	s := r.NewScope()
	s.Register(def(t, "mine", ""))
	tests := []struct {
		name string
		r    Restriction
		want string
	}{
		{"empty", Restriction{}, "empty restriction"},
		{"empty deny list", Restriction{Deny: []string{}}, "empty restriction"},
		{"both", Restriction{Allow: []string{"a"}, Deny: []string{"b"}}, "either an allow list or a deny list"},
		{"unknown", Restriction{Allow: []string{"a", "nope"}}, `"nope" is not a registered tool`},
		{"reserved", Restriction{Deny: []string{"run_code"}}, `"run_code" is reserved`},
		{"local", Restriction{Deny: []string{"mine"}}, `"mine" is local to this scope`},
		{"every problem listed", Restriction{Deny: []string{"x", "y"}}, `"x" is not a registered tool; "y" is not a registered tool`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lift, err := s.Restrict(tt.r)
			if err == nil || lift != nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Restrict = %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
	if got := visibleNames(s); !slices.Equal(got, []string{"a", "b", "mine"}) {
		t.Fatalf("a refused restriction changed visibility: %v", got)
	}
}

func TestRestrictSemantics(t *testing.T) {
	r := New()
	for _, n := range []string{"a", "b", "c"} {
		r.Register(def(t, n, ""))
	}
	s := r.NewScope()
	s.Register(def(t, "local", ""))
	liftAllow, err := s.Restrict(Restriction{Allow: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	liftDeny, err := s.Restrict(Restriction{Deny: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := visibleNames(s); !slices.Equal(got, []string{"a", "local"}) {
		t.Fatalf("allow ∩ deny = %v", got)
	}
	// An allow list excludes a global registered later; the global view is unrestricted.
	r.Register(def(t, "later", ""))
	if s.Get("later") != nil || r.Get("later", nil) == nil {
		t.Fatal("allow list must exclude later names in the scope only")
	}
	liftAllow()
	// A deny list admits a later global.
	if got := visibleNames(s); !slices.Equal(got, []string{"a", "c", "later", "local"}) {
		t.Fatalf("after lifting allow: %v", got)
	}
	liftDeny()
	liftDeny()
	if got := visibleNames(s); !slices.Equal(got, []string{"a", "b", "c", "later", "local"}) {
		t.Fatalf("after lifting both: %v", got)
	}
	// A local tool shadowing a restricted global stays visible: it bypasses masks.
	s.Restrict(Restriction{Deny: []string{"c"}})
	s.Register(def(t, "c", "local"))
	if d := s.Get("c"); d == nil || d.Description != "local" {
		t.Fatal("a local tool must bypass restrictions")
	}
}

// model is the restriction algebra written as plain set logic, to check the
// registry against: a global is visible when every mask admits it; locals
// always are.
type model struct {
	globals map[string]bool
	locals  map[string]bool
	masks   map[int]Restriction
}

func (m *model) visible() []string {
	var out []string
	for g := range m.globals {
		if m.locals[g] {
			continue
		}
		ok := true
		for _, r := range m.masks {
			if r.Allow != nil && !slices.Contains(r.Allow, g) || slices.Contains(r.Deny, g) {
				ok = false
			}
		}
		if ok {
			out = append(out, g)
		}
	}
	for l := range m.locals {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// TestRestrictionAlgebraProperties drives random sequences of registrations
// and restrictions and checks, after every step, that the scope sees exactly
// what the set model says, that Get, Visible, KnownNames and Schemas agree,
// and that the outcome does not depend on the order masks were added.
func TestRestrictionAlgebraProperties(t *testing.T) {
	universe := []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"}
	applied, refused := 0, 0
	defer func() {
		if applied < 500 || refused < 100 {
			t.Errorf("the generator is too narrow: %d restrictions applied, %d refused", applied, refused)
		}
	}()
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 42))
		reg := New()
		s := reg.NewScope()
		m := &model{globals: map[string]bool{}, locals: map[string]bool{}, masks: map[int]Restriction{}}
		unregG := map[string]func(){}
		// Compiling a schema per registration would dominate the run time.
		defs := map[string]*Def{}
		def := func(t testing.TB, name, tag string) *Def {
			if defs[name+tag] == nil {
				defs[name+tag] = def(t, name, tag)
			}
			return defs[name+tag]
		}
		lifts := map[int]func(){}
		next := 0
		for step := range 40 {
			n := universe[rng.IntN(len(universe))]
			switch op := rng.IntN(6); op {
			case 0:
				if un, err := reg.Register(def(t, n, "g")); err == nil {
					m.globals[n], unregG[n] = true, un
				} else if !m.globals[n] {
					t.Fatalf("seed %d step %d: register %s: %v", seed, step, n, err)
				}
			case 1:
				if un := unregG[n]; un != nil {
					un()
					delete(m.globals, n)
					delete(unregG, n)
				}
			case 2:
				if !m.locals[n] {
					if _, err := s.Register(def(t, n, "l")); err != nil {
						t.Fatalf("seed %d: local %s: %v", seed, n, err)
					}
					m.locals[n] = true
				}
			case 3, 4:
				var pick []string
				// Mostly valid names, sometimes a refused one, so both
				// outcomes are exercised.
				for _, u := range universe {
					ok := m.globals[u] && !m.locals[u]
					if ok && rng.IntN(2) == 0 || !ok && rng.IntN(20) == 0 {
						pick = append(pick, u)
					}
				}
				r := Restriction{Allow: pick}
				if op == 4 {
					r = Restriction{Deny: pick}
				}
				valid := len(pick) > 0
				for _, p := range pick {
					if !m.globals[p] || m.locals[p] {
						valid = false
					}
				}
				lift, err := s.Restrict(r)
				if (err == nil) != valid {
					t.Fatalf("seed %d step %d: Restrict(%v) err=%v, model says valid=%v", seed, step, r, err, valid)
				}
				if err == nil {
					m.masks[next], lifts[next] = r, lift
					next++
					applied++
				} else {
					refused++
				}
			case 5:
				for id, lift := range lifts {
					lift()
					delete(lifts, id)
					delete(m.masks, id)
					break
				}
			}
			want := m.visible()
			if got := visibleNames(s); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("seed %d step %d: scope sees %v, model %v", seed, step, got, want)
			}
			checkAgreement(t, s, universe)
		}
		// Order independence: the same masks added in reverse order over the
		// same globals give the same view.
		s2 := reg.NewScope()
		for l := range m.locals {
			s2.Register(def(t, l, "l"))
		}
		ids := slices.Sorted(func(yield func(int) bool) {
			for id := range m.masks {
				if !yield(id) {
					return
				}
			}
		})
		slices.Reverse(ids)
		for _, id := range ids {
			if _, err := s2.Restrict(m.masks[id]); err != nil {
				// A mask can name a global unregistered since; then the
				// reverse replay is not comparable.
				goto next
			}
		}
		if a, b := visibleNames(s), visibleNames(s2); !slices.Equal(a, b) {
			t.Fatalf("seed %d: mask order matters: %v vs %v", seed, a, b)
		}
	next:
	}
}

// visibleNames is what the scope sees now, restrictions applied.
func visibleNames(s *Scope) []string {
	var out []string
	for _, d := range s.Visible() {
		out = append(out, d.Name)
	}
	return out
}

func checkAgreement(t *testing.T, s *Scope, universe []string) {
	t.Helper()
	vis := s.Visible()
	var schemaNames []string
	for _, sc := range s.Schemas() {
		schemaNames = append(schemaNames, sc.Name)
	}
	var visNames []string
	for _, d := range vis {
		visNames = append(visNames, d.Name)
	}
	if !slices.Equal(visNames, schemaNames) {
		t.Fatalf("Visible %v and Schemas %v disagree in native mode", visNames, schemaNames)
	}
	for _, n := range universe {
		got := s.Get(n)
		if (got != nil) != slices.Contains(visNames, n) {
			t.Fatalf("Get(%s) = %v but Visible = %v", n, got, visNames)
		}
		rd, err := s.Resolve(n)
		if rd != got || (err == nil) != (got != nil) {
			t.Fatalf("Resolve(%s) = %v, %v; Get = %v", n, rd, err, got)
		}
	}
}

func TestModesAndReservedCodeTool(t *testing.T) {
	r := New()
	r.Register(def(t, "read", ""))
	s := r.NewScope()
	if err := s.SetMode(Code); err == nil || !strings.Contains(err.Error(), "needs the run_code tool") {
		t.Fatalf("code mode without the code tool: %v", err)
	}
	other := codeTool()
	other.Name = "other"
	if err := AddCodeTool(r, other); err == nil {
		t.Fatal("AddCodeTool accepted a tool not named run_code")
	}
	if _, err := Define(Tool[struct{}, string]{Name: CodeToolName, Run: codeTool().Run}); err == nil {
		t.Fatal("Define accepted the reserved name")
	}
	if err := AddCodeTool(r, codeTool()); err != nil {
		t.Fatal(err)
	}
	if err := AddCodeTool(r, codeTool()); err == nil {
		t.Fatal("the code tool was installed twice")
	}
	if _, err := r.Register(reservedDef(t)); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("registering run_code: %v", err)
	}
	if _, err := s.Register(reservedDef(t)); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("shadowing run_code: %v", err)
	}
	if err := s.SetMode("fast"); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
	if err := r.SetMode(""); err == nil {
		t.Fatal("the registry accepted an empty mode")
	}

	schemaNames := func() []string {
		var out []string
		for _, sc := range s.Schemas() {
			out = append(out, sc.Name)
		}
		return out
	}
	tests := []struct {
		mode        Mode
		schemas     []string
		known       []string
		readErr     string
		runCodeSeen bool
	}{
		{Native, []string{"read"}, []string{"read"}, "", false},
		// KnownNames never lists run_code: it is the universe restrictions name.
		{Code, []string{"run_code"}, []string{"read"},
			"only `run_code` is callable directly — call `read` from inside a `run_code` program instead", true},
		{Both, []string{"read", "run_code"}, []string{"read"}, "", true},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			if err := s.SetMode(tt.mode); err != nil {
				t.Fatal(err)
			}
			if s.Mode() != tt.mode {
				t.Fatalf("Mode = %s", s.Mode())
			}
			if got := schemaNames(); !slices.Equal(got, tt.schemas) {
				t.Errorf("Schemas = %v, want %v", got, tt.schemas)
			}
			if got := s.KnownNames(); !slices.Equal(got, tt.known) {
				t.Errorf("KnownNames = %v, want %v", got, tt.known)
			}
			_, err := s.Resolve("read")
			var te *Error
			if tt.readErr == "" && err != nil || tt.readErr != "" && (!errors.As(err, &te) || te.Code != "UNKNOWN_TOOL" || te.Message != tt.readErr) {
				t.Errorf("Resolve(read) = %v, want %q", err, tt.readErr)
			}
			// Code Mode programs still reach every visible tool by Get.
			if s.Get("read") == nil {
				t.Error("Get(read) must work in every mode")
			}
			if (s.Get("run_code") != nil) != tt.runCodeSeen {
				t.Errorf("Get(run_code) visible = %v", !tt.runCodeSeen)
			}
		})
	}
	if _, err := s.Restrict(Restriction{Allow: []string{"run_code"}}); err == nil {
		t.Fatal("run_code was restricted")
	}
	// A scope mode overrides the registry's; "" inherits again.
	if err := s.SetMode(""); err != nil || s.Mode() != Native {
		t.Fatalf("inherit: %v %s", err, s.Mode())
	}
	r.SetMode(Code)
	if s.Mode() != Code {
		t.Fatal("scope did not inherit the registry mode")
	}
	_, err := s.Resolve("nope")
	if err == nil || err.Error() != `unknown tool "nope"; available tools: run_code` {
		t.Fatalf("unknown in code mode: %v", err)
	}
}

func TestResolveUnknownListsCallableTools(t *testing.T) {
	r := New()
	s := r.NewScope()
	if _, err := s.Resolve("x"); err == nil || err.Error() != `unknown tool "x"; available tools: (none)` {
		t.Fatalf("%v", err)
	}
	r.Register(def(t, "b", ""))
	r.Register(def(t, "a", ""))
	if _, err := s.Resolve("x"); err == nil || err.Error() != `unknown tool "x"; available tools: a, b` {
		t.Fatalf("%v", err)
	}
}

func TestChangeEvents(t *testing.T) {
	r := New()
	var mu sync.Mutex
	var all, scoped, other []string
	rec := func(dst *[]string) func(Change) {
		return func(c Change) {
			mu.Lock()
			defer mu.Unlock()
			s := c.Op.String()
			if c.Name != "" {
				s += " " + c.Name
			}
			if c.Restriction != nil {
				s += " " + c.Restriction.String()
			}
			if c.Op == ModeChanged {
				s += " " + string(c.Mode)
			}
			*dst = append(*dst, s)
		}
	}
	stopAll := r.OnChange(rec(&all))
	r.OnChange(func(Change) { panic("listener bug") }) // contained
	s, s2 := r.NewScope(), r.NewScope()
	s.OnChange(rec(&scoped))
	s2.OnChange(rec(&other))

	unA, _ := r.Register(def(t, "a", ""))
	unL, _ := s.Register(def(t, "l", ""))
	lift, _ := s.Restrict(Restriction{Deny: []string{"a"}})
	s.Restrict(Restriction{})      // refused: no event
	r.Register(def(t, "a", "dup")) // refused: no event
	lift()
	lift()
	unL()
	unA()
	unA()
	AddCodeTool(r, codeTool())
	s.SetMode(Both)
	stopAll()
	r.Register(def(t, "after", ""))

	wantAll := []string{"tool added a", "tool added l", "restriction added deny a", "restriction removed deny a",
		"tool removed l", "tool removed a", "tool added run_code", "mode changed both"}
	wantScoped := append(slices.Clone(wantAll), "tool added after")
	wantOther := []string{"tool added a", "tool removed a", "tool added run_code", "tool added after"}
	for _, c := range []struct {
		name      string
		got, want []string
	}{{"registry", all, wantAll}, {"scope", scoped, wantScoped}, {"other scope", other, wantOther}} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s listener got\n%q\nwant\n%q", c.name, c.got, c.want)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	r := New()
	r.Register(def(t, "base", ""))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s := r.NewScope()
			for j := range 50 {
				name := fmt.Sprintf("t%d_%d", i, j)
				un, err := r.Register(def(t, name, ""))
				if err != nil {
					t.Error(err)
					return
				}
				lift, err := s.Restrict(Restriction{Deny: []string{name}})
				if err != nil {
					t.Error(err)
					return
				}
				if s.Get(name) != nil || s.Get("base") == nil {
					t.Error("restriction not applied")
				}
				_ = s.Schemas()
				lift()
				un()
			}
		})
	}
	wg.Wait()
}

// TestStructuredSubset states the seed's rule: the structured-output subset
// rejects loud. Everything outside it is refused with UNSUPPORTED_SCHEMA,
// and one message lists every violation, each at its JSON pointer.
func TestStructuredSubset(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"supported", `{"type":"object","title":"T","description":"d","properties":{"a":{"type":"string","enum":["x","y"]},"b":{"type":"array","items":{"const":1}},"c":{"type":"object","additionalProperties":true},"d":true,"e":{"type":"integer","enum":[1,2]},"f":{"type":"null","const":null}},"required":["a"],"additionalProperties":false,"examples":[{}]}`, ""},
		// Any JSON root, any node of the subset at the root (the seed's
		// structured subset): a string, an array, a union, true.
		{"a string root", `{"type":"string","enum":["yes","no"]}`, ""},
		{"an array root", `{"type":"array","items":{"type":"integer"}}`, ""},
		{"oneOf at the root", `{"oneOf":[{"type":"array","items":{"type":"string"}},{"type":"object","properties":{"e":{"type":"string"}},"required":["e"]}],"description":"files or an error"}`, ""},
		{"a boolean root", `true`, ""},
		{"oneOf inside a property", `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"null"}]}}}`, ""},
		{"oneOf alternatives are held to the subset", `{"oneOf":[{"type":"string","pattern":"x"},{"enum":[1]},3]}`,
			`unsupported schema: "#/oneOf/0": keyword "pattern" is not supported; "#/oneOf/1": keyword "enum" needs a "type"; "#/oneOf/2": a schema must be an object or a boolean`},
		{"an empty oneOf", `{"oneOf":[]}`, `unsupported schema: "#/oneOf": must be a non-empty array of schemas`},
		{"not JSON", `{`, "unsupported schema: not valid JSON"},
		{"type array", `{"type":"object","properties":{"a":{"type":["string","null"]}}}`,
			`unsupported schema: "#/properties/a/type": type arrays are not supported; name one type`},
		{"items on an object", `{"type":"object","items":{"type":"string"}}`,
			`unsupported schema: "#": keyword "items" needs "type": "array"`},
		{"properties on an array", `{"type":"object","properties":{"a":{"type":"array","properties":{}}}}`,
			`unsupported schema: "#/properties/a": keyword "properties" needs "type": "object"`},
		{"enum without a type", `{"type":"object","properties":{"a":{"enum":["x"]}}}`,
			`unsupported schema: "#/properties/a": keyword "enum" needs a "type"`},
		{"required names an undeclared property", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`,
			`unsupported schema: "#/required": "b" is required but not a declared property`},
		{"schema-valued additionalProperties", `{"type":"object","additionalProperties":{"type":"integer"}}`,
			`unsupported schema: "#/additionalProperties": must be true or false (a schema for extra properties is not supported)`},
		{"enum value of another type", `{"type":"object","properties":{"n":{"type":"number","enum":["1",2]}}}`,
			`unsupported schema: "#/properties/n/enum/0": "1" is not a number`},
		{"enum value not a scalar", `{"type":"object","properties":{"n":{"type":"object","enum":[{}]}}}`,
			`unsupported schema: "#/properties/n/enum/0": {} is not a scalar (string, number, boolean or null)`},
		{"const of another type", `{"type":"object","properties":{"n":{"type":"integer","const":1.5}}}`,
			`unsupported schema: "#/properties/n/const": 1.5 is not an integer`},
		// From the seed's cases: a null const with no type, and a const no
		// enum value equals, are refused.
		{"null const without a type", `{"type":"object","properties":{"n":{"const":null}}}`,
			`unsupported schema: "#/properties/n/const": a null const needs "type": "null"`},
		{"const outside its enum", `{"type":"object","properties":{"n":{"type":"string","enum":["a","b"],"const":"c"}}}`,
			`unsupported schema: "#/properties/n/const": "c" is not one of the enum's values; no value could match both`},
		{"const inside its enum", `{"type":"object","properties":{"n":{"type":"number","enum":[1,2],"const":2.0}}}`, ""},
		{"every violation listed", `{"type":"object","oneOf":[],"properties":{"a":{"type":"string","pattern":"x","minLength":1},"b/c":{"type":"float"},"d":{"type":["string"],"enum":["x"]}},"required":["z"],"$ref":"#"}`,
			`unsupported schema: "#": keyword "$ref" is not supported; "#/oneOf": must be a non-empty array of schemas; "#/properties/a": keyword "minLength" is not supported; "#/properties/a": keyword "pattern" is not supported; "#/properties/b~1c/type": unknown type "float"; "#/properties/d": keyword "enum" needs a "type"; "#/properties/d/type": type arrays are not supported; name one type; "#/required": "z" is required but not a declared property`},
		{"bad shapes", `{"type":"object","properties":[],"required":[1],"enum":[]}`,
			`unsupported schema: "#/enum": must be a non-empty array; "#/properties": must be an object of schemas; "#/required": must be an array of property names`},
		{"bad type forms", `{"type":"object","properties":{"b":{"type":3},"c":{"type":"array","items":3}}}`,
			`unsupported schema: "#/properties/b/type": must be a type name; "#/properties/c/items": a schema must be an object or a boolean`},
		{"too deep", `{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"object","properties":{"a":`, 100) + `{}` + strings.Repeat(`}}`, 100) + `}}`,
			`unsupported schema: it nests deeper than 128 levels`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := CompileStructured(json.RawMessage(tt.schema))
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if string(s.Schema()) != tt.schema {
					t.Fatalf("Schema() = %s", s.Schema())
				}
				return
			}
			var te *Error
			if !errors.As(err, &te) || te.Code != "UNSUPPORTED_SCHEMA" || !strings.HasPrefix(te.Message, tt.want) {
				t.Fatalf("got %v\nwant UNSUPPORTED_SCHEMA %s", err, tt.want)
			}
		})
	}
}

func TestStructuredValidate(t *testing.T) {
	s, err := CompileStructured(json.RawMessage(`{"type":"object","additionalProperties":false,
		"properties":{"name":{"type":"string"},"kind":{"type":"string","enum":["a","b"]},"v":{"const":2},
		"items":{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}}},
		"required":["name"]}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ value, want string }{
		{`{"name":"n","items":[{"id":1}]}`, ""},
		{`{"name":3}`, `invalid value: "name" must be a string`},
		{`[]`, `invalid value: value must be an object`},
		{`{"kind":"c","v":1,"extra":0,"items":[{"id":"x"},{}]}`,
			`invalid value: "extra" is not a declared property (additionalProperties: false); "items[0].id" must be an integer; "kind" must be one of ["a","b"]; "v" must be 2; missing required property "items[1].id"; missing required property "name"`},
		{`{`, "invalid value: not valid JSON"},
	}
	for _, tt := range tests {
		err := s.Validate(json.RawMessage(tt.value))
		if tt.want == "" {
			if err != nil {
				t.Errorf("Validate(%s) = %v", tt.value, err)
			}
			continue
		}
		var te *Error
		if !errors.As(err, &te) || te.Code != "INVALID_VALUE" || !strings.HasPrefix(te.Message, tt.want) {
			t.Errorf("Validate(%s)\n got %v\nwant %s", tt.value, err, tt.want)
		}
	}
}

// TestStructuredValidateOneOf: a value checked against a union says, for
// each alternative, what it lacks, or which alternatives it fits when it
// fits more than one; never the alternatives' demands as one flat list.
func TestStructuredValidateOneOf(t *testing.T) {
	tests := []struct{ schema, value, want string }{
		{`{"oneOf":[{"type":"array","items":{"type":"string"}},{"type":"object","properties":{"error":{"type":"string"}},"required":["error"]}]}`,
			`["a.txt"]`, ""},
		{`{"oneOf":[{"type":"array","items":{"type":"string"}},{"type":"object","properties":{"error":{"type":"string"}},"required":["error"]}]}`,
			`42`, `invalid value: value matches no oneOf alternative: [value must be an array] or [value must be an object]`},
		{`{"oneOf":[{"type":"array","items":{"type":"string"}},{"type":"object","properties":{"error":{"type":"string"}},"required":["error"]}]}`,
			`{}`, `invalid value: value matches no oneOf alternative: [value must be an array] or [missing required property "error"]`},
		{`{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `1`,
			`invalid value: value matches oneOf alternatives 1 and 2; it must match exactly one`},
		{`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`, `{"v":true}`,
			`invalid value: "v" matches no oneOf alternative: ["v" must be a string] or ["v" must be an integer]`},
	}
	for _, tt := range tests {
		s, err := CompileStructured(json.RawMessage(tt.schema))
		if err != nil {
			t.Fatalf("CompileStructured(%s) = %v", tt.schema, err)
		}
		got := ""
		if err := s.Validate(json.RawMessage(tt.value)); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Validate(%s) against %s\n got %q\nwant %q", tt.value, tt.schema, got, tt.want)
		}
	}
}
