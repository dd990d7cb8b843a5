package codemode

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/acp-bridge/acp-bridge/registry"
)

// Instructions is the fixed instruction block that opens the SDK section
// (codemode/DESIGN.md). It is model-facing text: change it deliberately.
const Instructions = "## Writing code for run_code\n\n" +
	"`run_code` takes two required arguments: `code` — the body of an async TypeScript function " +
	"(erasable syntax only — no `enum` or namespaces; type annotations are advisory, the code runs type-stripped) — " +
	"and `description`, a short summary of what the program does. Inside the program:\n\n" +
	"- Call tools as `await tools.name(args)` — quoted access for exotic names: `tools[\"my-tool\"](args)`. " +
	"Every call resolves to the tool's typed canonical JSON value. Tool arguments must be lossless JSON.\n" +
	"- A FAILED tool call rejects with `ToolCallError`, whose `toolName` identifies the failed tool and whose " +
	"`message` is human-readable — `try/catch` it to handle and continue.\n" +
	"- Independent read-only calls MAY overlap under `Promise.all` (safe calls run concurrently; mutating calls " +
	"run alone, in submission order). Sequence dependent work with `await`.\n" +
	"- Emit results with `return` and/or `console.log(...)`. Only what you print or return is program output. " +
	"A successful tool result containing an image is attached after the run so you can inspect it on the next step; " +
	"every other intermediate result stays out of the conversation, so extract just what you need.\n\n" +
	"The available tools:"

// CodeOnlyRule is the system-prompt rule of the code mode (codemode/DESIGN.md).
const CodeOnlyRule = "`run_code` is the only tool you can call directly — a tool call naming any other tool fails. " +
	"Reach every tool the SDK declares below from inside the program."

const jsonValueType = "type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }"

// SDKTool is one tool as the SDK declares it.
type SDKTool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON Schema of the arguments
	Output      json.RawMessage // JSON Schema of the value; nil: unknown
}

// RenderSDK renders the SDK section: the instruction block, then one ```ts
// fence declaring JsonValue, ToolArgsMap, ToolOutputMap, ToolName,
// ToolCallError and `tools`. Tools are sorted by name, so the same tool set
// always gives byte-identical text (a stable prompt prefix caches well).
// It never fails: what a schema cannot say becomes `unknown`.
func RenderSDK(tools []SDKTool) string {
	sorted := slices.Clone(tools)
	slices.SortStableFunc(sorted, func(a, b SDKTool) int { return strings.Compare(a.Name, b.Name) })
	var args, outs []string
	for _, t := range sorted {
		if t.Name == ToolName {
			continue
		}
		if doc := docComment(t.Description, 1); doc != "" {
			args = append(args, doc)
		}
		args = append(args, indent(1)+tsKey(t.Name)+": "+SchemaToTS(t.Parameters, 1)+";")
		outs = append(outs, indent(1)+tsKey(t.Name)+": "+SchemaToTS(t.Output, 1)+";")
	}
	var b strings.Builder
	b.WriteString(Instructions)
	b.WriteString("\n\n```ts\n")
	b.WriteString(jsonValueType)
	b.WriteString("\n\n")
	b.WriteString(block("interface ToolArgsMap", args))
	b.WriteString("\n\n")
	b.WriteString(block("interface ToolOutputMap", outs))
	b.WriteString("\n\ntype ToolName = keyof ToolOutputMap\n\n")
	b.WriteString("declare class ToolCallError extends Error {\n  readonly name: \"ToolCallError\";\n  readonly toolName: ToolName;\n}\n\n")
	b.WriteString("declare const tools: {\n  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;\n}\n```")
	return b.String()
}

func block(head string, members []string) string {
	if len(members) == 0 {
		return head + " {}"
	}
	return head + " {\n" + strings.Join(members, "\n") + "\n}"
}

// SDK renders the SDK for registered tools, typing their values as the
// runner's Values says.
func (r *Runner) SDK(defs []*registry.Def) string {
	return RenderSDK(r.SDKTools(defs))
}

// SDKTools describes registered tools for RenderSDK.
func (r *Runner) SDKTools(defs []*registry.Def) []SDKTool {
	out := make([]SDKTool, 0, len(defs))
	for _, d := range defs {
		if d == nil || d.Name == ToolName {
			continue
		}
		out = append(out, SDKTool{Name: d.Name, Description: d.Description, Parameters: d.Parameters(), Output: r.values.OutputSchema(d)})
	}
	return out
}

// docComment collapses a description to a one-line JSDoc comment.
func docComment(desc string, depth int) string {
	desc = strings.Join(strings.Fields(desc), " ")
	if desc == "" {
		return ""
	}
	return indent(depth) + "/** " + strings.ReplaceAll(desc, "*/", "*\\/") + " */"
}

func indent(depth int) string { return strings.Repeat("  ", depth) }

// tsKey writes a property name: bare when it is an identifier, else quoted.
func tsKey(k string) string {
	if isIdentifier(k) {
		return k
	}
	q, _ := json.Marshal(k)
	return string(q)
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}
