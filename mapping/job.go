package mapping

import (
	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// job shows a background job as a card of its own, drawn by the presenters
// of the tool that started it, as if the job were a call of that tool that
// runs until the job ends: a terminal card that stays live across turns.
func (t *Translator) job(p session.Payload) []acp.Update {
	switch p := p.(type) {
	case session.JobStart:
		ups := t.toolCall(session.ToolCall{CallID: p.CardID, Name: p.Tool, Args: p.Args})
		return append(ups, t.toolStatus(session.ToolStatus{CallID: p.CardID, Status: "running"})...)
	case session.JobOutput:
		return t.toolOutput(session.ToolOutput{CallID: p.CardID, Data: p.Data})
	case session.JobEnd:
		return t.toolResult(session.ToolResult{CallID: p.CardID, Result: registry.Result{
			Content: []registry.Content{registry.Text(p.Job + ": " + p.Status)}, Meta: p.Meta}})
	}
	return nil
}
