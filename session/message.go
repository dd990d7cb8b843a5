package session

// TypeAssistantMessage is logged once a model response is complete (or cut
// short by a cancel), with what the model said in full and the calls it
// made. The chunks before it are what the editor saw; this is what the model
// will be shown again when the conversation goes on after a load or resume.
// Without it, the log could not tell two calls of one response from one call
// in each of two responses, and the rebuilt context would differ from the
// one the model had. The mapping shows nothing for it.
const TypeAssistantMessage = "assistant/message" // AssistantMessage

// AssistantMessage is one complete model response as the model's context
// holds it.
type AssistantMessage struct {
	Text      string     `json:"text,omitempty"`
	Reasoning string     `json:"reasoning,omitempty"`
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
}
