package registry_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acp-bridge/acp-bridge/registry"
)

type greetArgs struct {
	Name  string `json:"name" jsonschema:"who to greet"`
	Style string `json:"style,omitempty" enum:"plain,loud"`
}

func greet() registry.Tool[greetArgs, string] {
	return registry.Tool[greetArgs, string]{
		Name:        "greet",
		Description: "Greet someone.",
		Run: func(_ context.Context, _ *registry.Call, in greetArgs) (string, error) {
			if in.Style == "loud" {
				return "HELLO, " + in.Name + "!", nil
			}
			return "Hello, " + in.Name, nil
		},
	}
}

// A typed tool gets its parameter schema from its input struct's tags.
func ExampleAdd() {
	r := registry.New()
	if _, err := registry.Add(r, greet()); err != nil {
		panic(err)
	}
	d := r.Get("greet", nil)
	fmt.Println(string(d.Parameters()))
	res, _ := d.Run(context.Background(), &registry.Call{Args: json.RawMessage(`{"name":"Ada","style":"loud"}`)})
	fmt.Println(res.Text())
	// Output:
	// {"type":"object","properties":{"name":{"type":"string","description":"who to greet"},"style":{"type":"string","enum":["plain","loud"]}},"required":["name"]}
	// HELLO, Ada!
}

// Validation reports every violation at once, path-qualified, so the model
// can fix its call in one step.
func ExampleDef_Validate() {
	d, _ := registry.Define(greet())
	fmt.Println(d.Validate(json.RawMessage(`{"style":"whisper"}`)))
	// Output:
	// invalid arguments: "style" must be one of ["plain","loud"]; missing required property "name"
}

// A scope layers session tools over the globals and narrows the globals
// with restrictions; its own tools bypass them.
func ExampleScope_Restrict() {
	r := registry.New()
	registry.MustAdd(r, greet())
	registry.MustAdd(r, registry.Tool[struct{}, string]{Name: "bash",
		Run: func(context.Context, *registry.Call, struct{}) (string, error) { return "", nil }})
	s := r.NewScope()
	lift, err := s.Restrict(registry.Restriction{Deny: []string{"bash"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(names(s.Visible()))
	_, err = s.Restrict(registry.Restriction{Allow: []string{"grep"}})
	fmt.Println(err)
	lift()
	fmt.Println(names(s.Visible()))
	// Output:
	// [greet]
	// registry: restriction refused: "grep" is not a registered tool
	// [bash greet]
}

// In code mode the model calls only run_code; a direct call to any other
// tool is refused with a message that says where to call it from.
func ExampleScope_Resolve() {
	r := registry.New()
	registry.MustAdd(r, greet())
	type program struct {
		Code string `json:"code" jsonschema:"the program"`
	}
	err := registry.AddCodeTool(r, registry.Tool[program, string]{
		Description: "Run a program against the tools.",
		Run:         func(context.Context, *registry.Call, program) (string, error) { return "", nil },
	})
	if err != nil {
		panic(err)
	}
	s := r.NewScope()
	if err := s.SetMode(registry.Code); err != nil {
		panic(err)
	}
	for _, sc := range s.Schemas() {
		fmt.Println("offered:", sc.Name)
	}
	_, err = s.Resolve("greet")
	fmt.Println(err)
	// Output:
	// offered: run_code
	// only `run_code` is callable directly — call `greet` from inside a `run_code` program instead
}

// The structured subset refuses what it cannot honour, listing every problem.
func ExampleCompileStructured() {
	_, err := registry.CompileStructured(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":0}},"patternProperties":{}}`))
	fmt.Println(err)
	s, _ := registry.CompileStructured(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`))
	fmt.Println(s.Validate(json.RawMessage(`{"n":"one"}`)))
	// Output:
	// unsupported schema: "#": keyword "patternProperties" is not supported; "#/properties/n": keyword "minimum" is not supported
	// invalid value: "n" must be an integer
}

func names(defs []*registry.Def) []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.Name
	}
	return out
}
