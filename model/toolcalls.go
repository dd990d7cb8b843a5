package model

import (
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// toolCalls assembles calls from streamed deltas, which go-openai decodes
// but does not put together. Most servers send a call's id and name in its
// first delta and pieces of its arguments in later ones, all keyed by index. Some do not number them: Gemini's
// compatible layer sends several whole calls in one delta, without index
// and with empty ids. A delta entry without index continues the last call
// only when it carries neither a name nor a new id.
type toolCalls struct {
	calls   []*partialCall // in the order they began
	byIndex map[int]*partialCall
}

type partialCall struct {
	id, name string
	args     strings.Builder
}

func (t *toolCalls) add(d openai.ToolCall) {
	var c *partialCall
	if d.Index != nil {
		c = t.byIndex[*d.Index]
		// A server that numbers every call 0 starts a new one with a new id.
		if c != nil && d.ID != "" && c.id != "" && d.ID != c.id {
			c = nil
		}
		if c == nil {
			c = t.start()
			if t.byIndex == nil {
				t.byIndex = map[int]*partialCall{}
			}
			t.byIndex[*d.Index] = c
		}
	} else {
		last := t.last()
		switch {
		case last != nil && d.ID != "" && d.ID == last.id:
			c = last
		case last != nil && d.ID == "" && d.Function.Name == "":
			c = last
		default:
			c = t.start()
		}
	}
	if d.ID != "" {
		c.id = d.ID
	}
	if d.Function.Name != "" && c.name == "" {
		c.name = d.Function.Name
	}
	c.args.WriteString(d.Function.Arguments)
}

func (t *toolCalls) start() *partialCall {
	c := &partialCall{}
	t.calls = append(t.calls, c)
	return c
}

func (t *toolCalls) last() *partialCall {
	if len(t.calls) == 0 {
		return nil
	}
	return t.calls[len(t.calls)-1]
}

func (t *toolCalls) len() int { return len(t.calls) }

// complete returns the calls in the order they began. A call the server
// gave no id gets one derived from the response id, so the tool result can
// refer back to it. Ids the server repeated are kept as they are: the
// endpoint reads its own ids back; the agent makes the editor's unique.
func (t *toolCalls) complete(respID string) []ToolCall {
	out := make([]ToolCall, 0, len(t.calls))
	for i, c := range t.calls {
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%s_%d", respID, i+1)
		}
		args := strings.TrimSpace(c.args.String())
		if args == "" {
			args = "{}"
		}
		out = append(out, ToolCall{ID: id, Name: c.name, Arguments: json.RawMessage(args)})
	}
	return out
}
