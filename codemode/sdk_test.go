package codemode

import (
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestSchemaToTS(t *testing.T) {
	deep := strings.Repeat(`{"type":"array","items":`, 200) + `{"type":"string"}` + strings.Repeat(`}`, 200)
	cases := []struct {
		name, schema, want string
	}{
		{"string", `{"type":"string"}`, `string`},
		{"integer is number", `{"type":"integer","minimum":1}`, `number`},
		{"boolean", `{"type":"boolean"}`, `boolean`},
		{"null", `{"type":"null"}`, `null`},
		{"type list", `{"type":["string","null"]}`, `string | null`},
		{"type list dedupes", `{"type":["integer","number"]}`, `number`},
		{"enum", `{"type":"string","enum":["a","b\"c"]}`, `"a" | "b\"c"`},
		{"mixed enum", `{"enum":[1,true,null,"x"]}`, `1 | true | null | "x"`},
		{"empty enum", `{"enum":[]}`, `never`},
		{"object enum member", `{"enum":[{"a":1}]}`, `unknown`},
		{"const", `{"const":"fixed"}`, `"fixed"`},
		{"array", `{"type":"array","items":{"type":"number"}}`, `number[]`},
		{"array of union", `{"type":"array","items":{"type":["string","number"]}}`, `(string | number)[]`},
		{"array without items", `{"type":"array"}`, `JsonValue[]`},
		{"tuple", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}]}`, `[string, number]`},
		{"oneOf", `{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}`, `string | string[]`},
		{"anyOf with unknown", `{"anyOf":[{"type":"string"},{"$ref":"#/x"}]}`, `unknown`},
		{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"oneOf":[{"type":"string"},{"type":"number"}]}]}`,
			"{\n    a: string;\n  } & (string | number)"},
		{"object", `{"type":"object","properties":{"path":{"type":"string","description":"Where.\nAbsolute."},"n":{"type":"integer"},"my-key":{"type":"boolean"}},"required":["path"]}`,
			"{\n    /** Where. Absolute. */\n    path: string;\n    n?: number;\n    \"my-key\"?: boolean;\n  } & Record<string, JsonValue>"},
		// The seed renders an implicitly open root open; a closed one, or a
		// nested object, lists only its declared properties.
		{"closed object", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, "{\n    a?: string;\n  }"},
		{"nested object", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}}},"additionalProperties":false}`,
			"{\n    a?: {\n      b?: string;\n    };\n  }"},
		{"closed empty object", `{"type":"object","additionalProperties":false}`, `Record<string, never>`},
		{"open object", `{"type":"object"}`, `{ [key: string]: JsonValue }`},
		{"map", `{"type":"object","additionalProperties":{"type":"integer"}}`, `{ [key: string]: number }`},
		{"properties and additional", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"number"}}`,
			"{\n    a?: string;\n    [key: string]: unknown;\n  }"},
		{"comment terminator escaped", `{"type":"object","properties":{"a":{"type":"string","description":"ends */ here"}}}`,
			"{\n    /** ends *\\/ here */\n    a?: string;\n  } & Record<string, JsonValue>"},
		{"no constraint", `{"description":"anything"}`, `JsonValue`},
		{"true schema", `true`, `JsonValue`},
		{"false schema", `false`, `never`},
		{"ref", `{"$ref":"#/$defs/x"}`, `unknown`},
		{"not", `{"not":{"type":"string"}}`, `unknown`},
		{"unknown type name", `{"type":"date"}`, `unknown`},
		{"type not a string", `{"type":7}`, `unknown`},
		{"properties not an object", `{"type":"object","properties":[1]}`, `unknown`},
		{"not JSON", `{"type":`, `unknown`},
		{"trailing garbage", `{"type":"string"} x`, `unknown`},
		{"empty", ``, `unknown`},
		{"nil-like", `null`, `unknown`},
		{"a number", `42`, `unknown`},
		{"too deep", deep, strings.Repeat("(", 0) + strings.Repeat("", 0) + deepWant()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SchemaToTS(json.RawMessage(c.schema), 1); got != c.want {
				t.Errorf("SchemaToTS(%s)\n got %q\nwant %q", c.schema, got, c.want)
			}
		})
	}
}

// deepWant: the converter renders maxTypeDepth+1 array levels, then unknown.
func deepWant() string { return "unknown" + strings.Repeat("[]", maxTypeDepth+1) }

// The converter is total: random and hostile input gives a type, never a
// panic or an empty string.
func TestSchemaToTSIsTotal(t *testing.T) {
	atoms := []string{`{"type":"string"}`, `true`, `false`, `null`, `1`, `"x"`, `[]`, `{}`, `{"type":[]}`, `{"enum":null}`, `{"oneOf":{}}`,
		`{"items":7}`, `{"prefixItems":{}}`, `{"required":"a","properties":{"a":1}}`, `{"additionalProperties":"x"}`, `{"allOf":[]}`}
	rng := rand.New(rand.NewPCG(1, 2))
	var gen func(d int) string
	gen = func(d int) string {
		if d == 0 {
			return atoms[rng.IntN(len(atoms))]
		}
		switch rng.IntN(6) {
		case 0:
			return `{"type":"array","items":` + gen(d-1) + `}`
		case 1:
			return `{"type":"object","properties":{"k":` + gen(d-1) + `,"a b":` + gen(d-1) + `},"required":["k"]}`
		case 2:
			return `{"oneOf":[` + gen(d-1) + `,` + gen(d-1) + `]}`
		case 3:
			return `{"allOf":[` + gen(d-1) + `]}`
		case 4:
			return `{"additionalProperties":` + gen(d-1) + `}`
		}
		return atoms[rng.IntN(len(atoms))]
	}
	for range 2000 {
		s := gen(6)
		if got := SchemaToTS(json.RawMessage(s), 1); got == "" {
			t.Fatalf("empty type for %s", s)
		}
		// Truncated input is not JSON: unknown.
		if got := SchemaToTS(json.RawMessage(s[:len(s)/2]), 1); got != "unknown" && len(s) > 2 {
			t.Fatalf("truncated %s gave %q", s[:len(s)/2], got)
		}
	}
}

func sdkTools() []SDKTool {
	return []SDKTool{
		{Name: "write", Description: "Write a file.\nCreates parent directories.", Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string","description":"Where to write"},"content":{"type":"string"}},"required":["file_path","content"],"additionalProperties":false}`),
			Output: json.RawMessage(`{"type":"object","properties":{"bytes":{"type":"integer"}},"required":["bytes"]}`)},
		{Name: "read", Description: "Read a text file.", Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"},"offset":{"type":"integer"}},"required":["file_path"]}`),
			Output: json.RawMessage(`{"type":"string"}`)},
		{Name: "my-tool", Description: "Has */ in it.", Parameters: json.RawMessage(`{"type":"object","properties":{"mode":{"enum":["fast","slow"]}}}`)},
		{Name: "run_code", Description: "never declared", Parameters: json.RawMessage(`{"type":"object"}`)},
	}
}

func TestSDKGolden(t *testing.T) {
	got := RenderSDK(sdkTools())
	path := "testdata/sdk.golden"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("SDK differs from %s (run with -update to accept):\n%s", path, got)
	}
}

func TestSDKIsDeterministic(t *testing.T) {
	tools := sdkTools()
	want := RenderSDK(tools)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		rng.Shuffle(len(tools), func(i, j int) { tools[i], tools[j] = tools[j], tools[i] })
		if got := RenderSDK(tools); got != want {
			t.Fatalf("the SDK changed with the tool order:\n%s", got)
		}
	}
}

func TestSDKExactTexts(t *testing.T) {
	sdk := RenderSDK(nil)
	wantEmpty := Instructions + "\n\n```ts\n" + jsonValueType + "\n\ninterface ToolArgsMap {}\n\ninterface ToolOutputMap {}\n\n" +
		"type ToolName = keyof ToolOutputMap\n\n" +
		"declare class ToolCallError extends Error {\n  readonly name: \"ToolCallError\";\n  readonly toolName: ToolName;\n}\n\n" +
		"declare const tools: {\n  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;\n}\n```"
	if sdk != wantEmpty {
		t.Errorf("empty SDK:\n%s", sdk)
	}
	for _, s := range []string{
		"## Writing code for run_code\n\n`run_code` takes two required arguments: `code` — the body of an async TypeScript function (erasable syntax only — no `enum` or namespaces; type annotations are advisory, the code runs type-stripped) — and `description`, a short summary of what the program does. Inside the program:\n\n",
		"- Call tools as `await tools.name(args)` — quoted access for exotic names: `tools[\"my-tool\"](args)`. Every call resolves to the tool's typed canonical JSON value. Tool arguments must be lossless JSON.\n",
		"- A FAILED tool call rejects with `ToolCallError`, whose `toolName` identifies the failed tool and whose `message` is human-readable — `try/catch` it to handle and continue.\n",
		"- Independent read-only calls MAY overlap under `Promise.all` (safe calls run concurrently; mutating calls run alone, in submission order). Sequence dependent work with `await`.\n",
		"- Emit results with `return` and/or `console.log(...)`. Only what you print or return is program output.",
		"\n\nThe available tools:\n\n```ts\n",
	} {
		if !strings.Contains(sdk, s) {
			t.Errorf("SDK lacks %q", s)
		}
	}
	if got := registry.CodeOnlyMessage("bash"); got != "only `run_code` is callable directly — call `bash` from inside a `run_code` program instead" {
		t.Errorf("code-only message = %q", got)
	}
}

// The runner declares registered tools with its Values' output types: the
// default resolves every call to text, so it declares string. A typed
// tool's arguments are open (extra keys allowed), as the seed renders them.
func TestRunnerSDKUsesValues(t *testing.T) {
	reg := testRegistry(t)
	defs := reg.NewScope().Visible()
	sdk := NewRunner(nil).SDK(defs)
	if !strings.Contains(sdk, "interface ToolOutputMap {\n  __proto__: string;\n  block: string;") {
		t.Errorf("SDK outputs:\n%s", sdk)
	}
	if !strings.Contains(sdk, "  /** Echo v back. */\n  echo: {\n    v?: JsonValue;\n  } & Record<string, JsonValue>;") {
		t.Errorf("SDK args:\n%s", sdk)
	}
	var _ = registry.Text
}
