package session

import "encoding/json"

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
	Text      string        `json:"text,omitempty"`
	Reasoning string        `json:"reasoning,omitempty"`
	ToolCalls []MessageCall `json:"toolCalls,omitempty"`
}

// MessageCall is a call as the model wrote it. Arguments are the model's
// bytes, in the one form arguments have from the endpoint to the tool
// (json.RawMessage); a model can write broken JSON, and the context must
// hold it byte for byte (the model is shown its own words again), so the
// log stores them as a JSON string (MarshalJSON), never as raw JSON.
type MessageCall struct {
	ID        string          `json:"id"` // the endpoint's id, sent back to it
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"-"` // logged as "arguments", a string
	// CardID is the call's id in the editor and in the tool events, when
	// it differs from ID: endpoints that repeat ids (call_0 in every
	// response) would otherwise merge cards.
	CardID string `json:"cardId,omitempty"`
}

// messageCallJSON is MessageCall's log form: the arguments as a string.
type messageCallJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	CardID    string `json:"cardId,omitempty"`
}

// MarshalJSON logs the arguments as a string, whatever bytes they are.
func (c MessageCall) MarshalJSON() ([]byte, error) {
	return json.Marshal(messageCallJSON{ID: c.ID, Name: c.Name, Arguments: string(c.Arguments), CardID: c.CardID})
}

// UnmarshalJSON reads the log form; empty arguments stay nil, as the
// model's message had them.
func (c *MessageCall) UnmarshalJSON(b []byte) error {
	var w messageCallJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = MessageCall{ID: w.ID, Name: w.Name, CardID: w.CardID}
	if w.Arguments != "" {
		c.Arguments = json.RawMessage(w.Arguments)
	}
	return nil
}

// Card is the id the call's card and tool events use.
func (c MessageCall) Card() string {
	if c.CardID != "" {
		return c.CardID
	}
	return c.ID
}

// TypeUserContext is logged when the turn's prompt (its user/message) enters
// the model's context. Not every prompt does: a turn with no model
// configured never reaches one (and slash commands do not either), so the
// log says so explicitly rather than a reload guessing.
const TypeUserContext = "user/context" // UserContext

// UserContext marks that the last user/message entered the model's context.
// Context is what UserPromptSubmit hooks added: it follows the prompt, as a
// user message of its own.
type UserContext struct {
	Context []string `json:"context,omitempty"`
}

// TypeUserSteer is logged when a message the user sent during a running
// turn (`_session/steering`) joins it: at the turn's next model request,
// after the results of the calls in flight. It is user input and enters
// the model's context as it is applied, live and on load.
const TypeUserSteer = "user/steer" // UserSteer

// UserSteer is a steered message, shaped as a prompt: the ACP content
// blocks received, the text the model was given and the blocks whose
// images it was given.
type UserSteer UserMessage
