package subagent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acp-bridge/acp-bridge/profiles"
	"github.com/acp-bridge/acp-bridge/registry"
)

// ToolName is the tool that starts a subagent.
const ToolName = "task"

// TaskInput is a task call's arguments.
type TaskInput struct {
	// Description is a short title for the card.
	Description string `json:"description,omitempty"`
	Prompt      string `json:"prompt"`
	Profile     string `json:"profile,omitempty"`
	// OutputSchema, when given, is the shape the answer must have.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// DefaultProfile is the profile of a task call that names none.
const DefaultProfile = "general"

// Launcher starts the subagent of a task call: it builds the Spec from the
// profile (its tools, model and instructions) and runs it.
type Launcher interface {
	Launch(ctx context.Context, c *registry.Call, p profiles.Profile, prompt string, schema *registry.Structured) (string, error)
	// ReadOnly reports whether every tool profile p gives is read-only:
	// then task calls of it may run at the same time as other safe calls.
	ReadOnly(p profiles.Profile) bool
}

// TaskTool defines the task tool over the profiles of set: its description
// and its profile enum list them, so the parent model chooses by their
// descriptions.
func TaskTool(set *profiles.Set, l Launcher) (*registry.Def, error) {
	list := set.List()
	names := make([]string, 0, len(list))
	var desc strings.Builder
	desc.WriteString("Delegate a task to a subagent with a fresh context (it does not see this conversation: say everything it needs) and its profile's tools; returns its final answer, or with output_schema a JSON value of that shape. " +
		"Read-only profiles' tasks in one response run at the same time.\nProfiles:")
	for _, p := range list {
		names = append(names, p.Name)
		fmt.Fprintf(&desc, "\n- %s: %s", p.Name, p.Description)
	}
	enum, _ := json.Marshal(names)
	params := `{"type":"object","properties":{` +
		`"description":{"type":"string","description":"3-6 word title"},` +
		`"prompt":{"type":"string","minLength":1},` +
		`"profile":{"type":"string","enum":` + string(enum) + `,"description":"default general"},` +
		`"output_schema":{"type":"object","description":"JSON Schema (type, oneOf, properties, required, additionalProperties, items, enum, const); any root: object, array, string, a oneOf union"}},` +
		`"required":["prompt"],"additionalProperties":false}`
	profileOf := func(in TaskInput) (profiles.Profile, bool) {
		name := in.Profile
		if name == "" {
			name = DefaultProfile
		}
		return set.Get(name)
	}
	return registry.Define(registry.Tool[TaskInput, string]{
		Name:        ToolName,
		Description: desc.String(),
		Parameters:  json.RawMessage(params),
		Facts:       registry.Facts{Kind: "think"},
		ConcurrencySafe: func(in TaskInput) bool {
			p, ok := profileOf(in)
			return ok && l.ReadOnly(p)
		},
		Run: func(ctx context.Context, c *registry.Call, in TaskInput) (string, error) {
			p, ok := profileOf(in)
			if !ok {
				return "", registry.Errorf(registry.CodeInvalidArgs, fmt.Sprintf("unknown profile %q; profiles: %s", in.Profile, strings.Join(names, ", ")))
			}
			var sch *registry.Structured
			if raw := bytes.TrimSpace(in.OutputSchema); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
				s, err := registry.CompileStructured(raw)
				if err != nil {
					return "", fmt.Errorf("output_schema refused: %w", err)
				}
				sch = s
			}
			return l.Launch(ctx, c, p, in.Prompt, sch)
		},
		PresentCall: func(in TaskInput) registry.View {
			return registry.GenericCard{Title: Title(in), Kind: "think", Content: []registry.Content{registry.Text(in.Prompt)}}
		},
	})
}

// Title is a task card's title: the profile, then the task's description
// (or the first line of its prompt).
func Title(in TaskInput) string {
	name := in.Profile
	if name == "" {
		name = DefaultProfile
	}
	what := strings.TrimSpace(in.Description)
	if what == "" {
		what, _, _ = strings.Cut(strings.TrimSpace(in.Prompt), "\n")
		if r := []rune(what); len(r) > 60 {
			what = string(r[:60]) + "…"
		}
	}
	return name + ": " + what
}
