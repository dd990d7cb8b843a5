package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/registry"
)

// asker puts a tool's question to the user as a form elicitation tied to
// its call (tools/question). Only for a client that takes form
// elicitations: without one a call gets no Asker, and the tool ends the
// turn with its question instead.
type asker struct {
	s      *conversation
	el     acp.Elicitor
	callID string
}

// askerFor is the Asker of one call, nil when the editor cannot be asked.
func (s *conversation) askerFor(callID string) registry.Asker {
	el, ok := s.a.client.(acp.Elicitor)
	if !ok || !s.caps.ElicitationMode("form") {
		return nil
	}
	return &asker{s: s, el: el, callID: callID}
}

// answerField is the form's one field.
const answerField = "answer"

func (a *asker) Ask(ctx context.Context, q registry.Question) (registry.Answer, error) {
	field := map[string]any{"type": "string", "title": "Answer"}
	if len(q.Options) > 0 {
		field["enum"] = q.Options
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{answerField: field}, "required": []string{answerField}})
	resp, err := a.el.CreateElicitation(ctx, &acp.CreateElicitationRequest{SessionID: a.s.id, ToolCallID: a.callID,
		Mode: "form", Message: q.Text, RequestedSchema: schema})
	if err != nil {
		if ctx.Err() != nil {
			return registry.Answer{}, ctx.Err()
		}
		return registry.Answer{}, fmt.Errorf("the editor could not ask the user: %w", err)
	}
	ans := registry.Answer{Action: resp.Action}
	if resp.Action == acp.ElicitAccept {
		if v, ok := resp.Content[answerField]; ok {
			ans.Answer = fmt.Sprint(v)
		}
	}
	return ans, nil
}
