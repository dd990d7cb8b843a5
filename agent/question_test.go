package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/question"
)

func questionCall(q string, options ...string) model.Message {
	args, _ := json.Marshal(map[string]any{"question": q, "options": options})
	return model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "q1", Name: question.Name, Arguments: args}}}
}

// The question tool asks through a form elicitation tied to its call when
// the client takes them, and the answer is the model's next input; without
// elicitation the turn ends with the question on its card, and the model
// is not asked again.
func TestQuestionTool(t *testing.T) {
	for _, tt := range []struct {
		name     string
		caps     acp.ClientCapabilities
		requests int    // model requests in the turn
		want     string // the tool result the model reads
	}{
		{"elicitation", acp.ClientCapabilities{Elicitation: json.RawMessage(`{"form":{}}`)}, 2, "The user answered: sqlite"},
		{"no elicitation", acp.ClientCapabilities{}, 1, "the turn ends"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := registry.New()
			question.Register(reg)
			g := newGatedModel(questionCall("Which database?", "postgres", "sqlite"), model.Message{Role: model.RoleAssistant, Content: "Using it."})
			e, ag := newEditorAgent(t, Options{Model: g, Registry: reg})
			var asked []acp.CreateElicitationRequest
			e.elicit = func(r *acp.CreateElicitationRequest) acp.CreateElicitationResponse {
				asked = append(asked, *r)
				return acp.CreateElicitationResponse{Action: acp.ElicitAccept, Content: map[string]any{"answer": "sqlite"}}
			}
			sid := e.newSessionCaps(t.TempDir(), tt.caps)
			go func() {
				for range tt.requests {
					g.next(t)
					g.release <- struct{}{}
				}
			}()
			stop, err := e.prompt(sid, "set up storage")
			if err != nil || stop != acp.StopEndTurn {
				t.Fatalf("stop %q, err %v", stop, err)
			}
			if g.n != tt.requests {
				t.Errorf("%d model requests, want %d", g.n, tt.requests)
			}
			h := ag.liveSession(t, sid).history()
			var result string
			for _, m := range h {
				if m.Role == model.RoleTool {
					result = m.Content
				}
			}
			if !strings.Contains(result, tt.want) {
				t.Errorf("the model read %q, want %q", result, tt.want)
			}
			if tt.requests == 2 {
				if len(asked) != 1 || asked[0].ToolCallID != "q1" || asked[0].Mode != "form" || asked[0].Message != "Which database?" ||
					!strings.Contains(string(asked[0].RequestedSchema), `"enum":["postgres","sqlite"]`) {
					t.Errorf("elicitation/create %+v", asked)
				}
			} else if len(asked) != 0 {
				t.Errorf("a client without elicitation was asked: %+v", asked)
			}
			var title string
			for _, u := range e.updates() {
				if c, ok := u.(*acp.ToolCall); ok {
					title = c.Title
				}
			}
			if title != "Question: Which database?" {
				t.Errorf("the card's title %q", title)
			}
		})
	}
}
