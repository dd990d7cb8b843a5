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
	el        acp.Elicitor
	sessionID string
	callID    string
}

// formElicitor is the client as an Elicitor when it takes form
// elicitations, else nil.
func formElicitor(client acp.Client, caps acp.ClientCapabilities) acp.Elicitor {
	el, ok := client.(acp.Elicitor)
	if !ok || !caps.ElicitationMode("form") {
		return nil
	}
	return el
}

// askerFor is the Asker of one call of the session, nil when the editor
// cannot be asked (el nil).
func askerFor(el acp.Elicitor, sessionID, callID string) registry.Asker {
	if el == nil {
		return nil
	}
	return &asker{el: el, sessionID: sessionID, callID: callID}
}

// answerField is the form's one field.
const answerField = "answer"

func (a *asker) Ask(ctx context.Context, q registry.Question) (registry.Answer, error) {
	field := map[string]any{"type": "string", "title": "Answer"}
	if len(q.Options) > 0 {
		field["enum"] = q.Options
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{answerField: field}, "required": []string{answerField}})
	resp, err := a.el.CreateElicitation(ctx, &acp.CreateElicitationRequest{SessionID: a.sessionID, ToolCallID: a.callID,
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
