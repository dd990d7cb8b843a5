// Package question holds the question tool: the model asks the user a
// question (a choice among options, or a short answer) and waits for the
// answer. Where the editor takes elicitation the question is a form in the
// editor (registry.Call.Ask); where it does not, the turn ends with the
// question on its card, and the user's next message is the answer.
package question

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/acp-bridge/acp-bridge/registry"
)

// Name is the tool's name.
const Name = "question"

type args struct {
	Question string   `json:"question" jsonschema:"The question, in one or two sentences"`
	Options  []string `json:"options,omitempty" jsonschema:"The answers to choose from; leave out for a short free answer"`
}

// Out is what became of the question.
type Out struct {
	Asked  bool   `json:"asked"`            // the user was asked in the editor
	Action string `json:"action,omitempty"` // accept, decline, cancel
	Answer string `json:"answer,omitempty"`
}

// Register adds the question tool to r.
func Register(r *registry.Registry) {
	registry.MustAdd(r, tool())
}

func tool() registry.Tool[args, Out] {
	return registry.Tool[args, Out]{
		Name:  Name,
		Facts: registry.Facts{ReadOnly: true, Kind: "think"},
		Description: "Ask the user a question when you cannot go on without their decision: offer options when " +
			"there are a few clear ones, else ask for a short answer. Ask one question at a time, and only what " +
			"you cannot find out yourself.",
		Run: func(ctx context.Context, c *registry.Call, in args) (Out, error) {
			q := registry.Question{Text: strings.TrimSpace(in.Question)}
			if q.Text == "" {
				return Out{}, registry.Errorf("INVALID_ARGS", "question is empty")
			}
			for _, o := range in.Options {
				if o = strings.TrimSpace(o); o != "" && !slices.Contains(q.Options, o) {
					q.Options = append(q.Options, o)
				}
			}
			if c.Ask == nil {
				return Out{}, nil // the turn ends with the question (EndsTurn)
			}
			a, err := c.Ask.Ask(ctx, q)
			if err != nil {
				return Out{}, err
			}
			return Out{Asked: true, Action: a.Action, Answer: a.Answer}, nil
		},
		Render: func(in args, out Out) []registry.Content {
			return []registry.Content{registry.Text(render(in, out))}
		},
		EndsTurn: func(_ args, out Out) bool { return !out.Asked },
		PresentCall: func(in args) registry.View {
			card := registry.GenericCard{Title: "Question: " + strings.TrimSpace(in.Question), Kind: "think"}
			if c := choices(in.Options); c != "" {
				card.Content = []registry.Content{registry.Text(c)}
			}
			return card
		},
	}
}

// render is what the model reads.
func render(in args, out Out) string {
	switch {
	case !out.Asked:
		return "The user cannot be asked from here: your question is shown to them and the turn ends. " +
			"Their answer will be their next message."
	case out.Action == "accept":
		return "The user answered: " + out.Answer
	case out.Action == "decline":
		return "The user declined to answer. Go on without it, or stop and say what you need."
	}
	return "The user dismissed the question without answering."
}

func choices(opts []string) string {
	if len(opts) == 0 {
		return ""
	}
	var b strings.Builder
	for i, o := range opts {
		fmt.Fprintf(&b, "%d. %s\n", i+1, o)
	}
	return strings.TrimRight(b.String(), "\n")
}
