// Package todo holds the todo_write tool: the model keeps a task list that
// the editor shows as the session's plan.
//
// The tool does not talk to the editor. Its result carries the list in
// Result.Meta as {"plan": [{content, status, priority}]}; the agent turns a
// result shaped so into the session's plan event, and the mapping sends it
// as a `plan` update (the whole list each time).
package todo

import (
	"context"
	"fmt"
	"strings"

	"github.com/acp-bridge/acp-bridge/registry"
)

// Name is the tool's name.
const Name = "todo_write"

// Item is one task.
type Item struct {
	Content  string `json:"content" jsonschema:"What to do, in a short imperative sentence"`
	Status   string `json:"status" enum:"pending,in_progress,completed" jsonschema:"pending, in_progress (one at a time) or completed"`
	Priority string `json:"priority,omitempty" enum:"high,medium,low" jsonschema:"high, medium (default) or low"`
}

type args struct {
	Todos []Item `json:"todos" jsonschema:"The complete list; it replaces the previous one"`
}

type meta struct {
	Plan []Item `json:"plan"`
}

// Register adds todo_write to r.
func Register(r *registry.Registry) {
	registry.MustAdd(r, tool())
}

func tool() registry.Tool[args, []Item] {
	return registry.Tool[args, []Item]{
		Name:  Name,
		Facts: registry.Facts{ReadOnly: true, Kind: "think"},
		Description: "Write the task list for the current work. Use it for work with three or more steps: " +
			"send the whole list each time, with exactly one item in_progress while you work and items marked " +
			"completed as soon as they are done. The user sees the list as the plan.",
		Run: func(_ context.Context, _ *registry.Call, in args) ([]Item, error) {
			items := make([]Item, 0, len(in.Todos))
			for i, t := range in.Todos {
				t.Content = strings.TrimSpace(t.Content)
				if t.Content == "" {
					return nil, registry.Errorf("INVALID_ARGS", fmt.Sprintf("todos[%d].content is empty", i))
				}
				if t.Priority == "" {
					t.Priority = "medium"
				}
				items = append(items, t)
			}
			return items, nil
		},
		Render: func(_ args, out []Item) []registry.Content {
			return []registry.Content{registry.Text(summary(out))}
		},
		Meta:            func(_ args, out []Item) any { return meta{Plan: out} },
		ConcurrencySafe: func(args) bool { return false }, // each list replaces the last: order matters
		// The list is shown once, as the session's plan (the plan update the
		// agent sends from the result): no card besides it, as other ACP
		// agents do; a failed call still gets one (package mapping).
		PresentCall: func(args) registry.View { return registry.NoCard{} },
	}
}

// summary is what the model reads back: counts and the list.
func summary(items []Item) string {
	if len(items) == 0 {
		return "The task list is now empty."
	}
	done := 0
	for _, it := range items {
		if it.Status == "completed" {
			done++
		}
	}
	return fmt.Sprintf("Task list updated: %d of %d completed.\n%s", done, len(items), checklist(items))
}

func checklist(items []Item) string {
	var b strings.Builder
	for _, it := range items {
		mark := "[ ]"
		switch it.Status {
		case "completed":
			mark = "[x]"
		case "in_progress":
			mark = "[~]"
		}
		fmt.Fprintf(&b, "- %s %s\n", mark, strings.TrimSpace(it.Content))
	}
	return strings.TrimRight(b.String(), "\n")
}
