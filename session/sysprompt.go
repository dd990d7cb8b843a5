package session

// TypeClientPrompt is the client's system prompt for the session
// (systemPrompt on new, load, resume or fork). The last one logged is the
// session's: a reload gives the model the same instructions.
const TypeClientPrompt = "system/prompt" // ClientPrompt

// ClientPrompt is the client's instructions: added to the agent's own
// ("append") or in their place ("override").
type ClientPrompt struct {
	Mode string `json:"mode"`
	Text string `json:"text"`
}
