package codemode

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acp-bridge/acp-bridge/registry"
)

// Args are run_code's arguments.
type Args struct {
	Code        string `json:"code"`
	Description string `json:"description"`
}

// ToolDescription is run_code's description (codemode/DESIGN.md).
const ToolDescription = "Execute a TypeScript program against the available tools. Takes two required arguments: " +
	"`code`, the BODY of an async function (erasable syntax only; top-level `await` and `return` work), and " +
	"`description`, a short summary of what the program does. Call tools as `await tools.name(args)` per the " +
	"declarations in the system prompt. Only what you print or return is program output — curate it. " +
	"Image-bearing subtool results are attached after the run."

const toolParameters = `{"type":"object","properties":{` +
	`"code":{"type":"string","description":"The program: the body of an async TypeScript function."},` +
	`"description":{"type":"string","minLength":1,"description":"Clear, concise description of what this program does in active voice, 5-10 words (shown in the UI)."}},` +
	`"required":["code","description"]}`

// Tool returns run_code bound to one host (a session): its programs call
// the host's tools, and their sub-calls go through the host's pipeline.
// The card is a generic execute card titled with the description and
// showing the program; the result card shows the run's text.
// A runner whose MaxParallel is negative cannot make one.
func (r *Runner) Tool(host Host) (*registry.Def, error) {
	if r.limits.MaxParallel < 0 {
		return nil, fmt.Errorf("codemode: MaxParallel must be positive (or 0 for the default %d), not %d", DefaultMaxParallel, r.limits.MaxParallel)
	}
	return registry.DefineCodeTool(registry.Tool[Args, Output]{
		Name:        ToolName,
		Description: ToolDescription,
		Parameters:  []byte(toolParameters),
		Run: func(ctx context.Context, c *registry.Call, in Args) (Output, error) {
			if strings.TrimSpace(in.Description) == "" {
				// The schema's minLength lets blanks through; the card
				// would have no title.
				return Output{}, registry.Errorf(registry.CodeInvalidArgs, `invalid arguments: "description" must say what the program does, not be blank`)
			}
			out, err := r.Run(ctx, c, in.Code, host)
			var re *RunError
			if errors.As(err, &re) {
				return Output{}, registry.Errorf(CodeRunFailed, re.Error())
			}
			return out, err
		},
		Render: func(_ Args, out Output) []registry.Content {
			return append([]registry.Content{registry.Text(out.Text())}, out.Images...)
		},
		PresentCall: func(in Args) registry.View { return card(in) },
		// The finished card keeps the program above its result: a card's
		// content is replaced whole, and a client that shows no rawInput
		// (agent-shell) would be left with the result alone.
		PresentResult: func(in Args, r registry.Result) registry.View {
			v := card(in)
			v.Content = append(v.Content, r.Content...)
			return v
		},
	})
}

// card is run_code's card: titled with the description, showing the program.
func card(in Args) registry.GenericCard {
	title := strings.TrimSpace(in.Description)
	if title == "" {
		title = ToolName
	}
	return registry.GenericCard{Title: title, Kind: "execute",
		Content: []registry.Content{registry.Text(fence(in.Code, "ts"))}}
}

// fence wraps text in a Markdown code fence longer than any backtick run inside it.
func fence(text, lang string) string {
	ticks := "```"
	for strings.Contains(text, ticks) {
		ticks += "`"
	}
	return ticks + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + ticks
}
