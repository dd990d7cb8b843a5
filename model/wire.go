package model

import (
	"bytes"
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"
)

// A streamed chunk as the OpenAI-compatible servers really send it, decoded
// once per line: go-openai's types carry the delta, the tool calls and the
// usage; the fields beside them are what those types lack. A field
// declared here shadows the embedded one of the same JSON name
// (encoding/json takes the shallower field). The envelope is ours: the
// library's ChatCompletionStreamResponse would also decode object, model,
// created and content-filter results on every line, which nothing reads.

// wireChunk is one streamed chat.completion.chunk, or (from a server that
// ignored stream: true) a whole chat.completion.
type wireChunk struct {
	ID      string       `json:"id"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	// Error: an error reported inside the stream (OpenRouter puts it after
	// id and choices, vLLM and llama.cpp send it alone).
	Error json.RawMessage `json:"error"`
	// Message and Detail: vLLM's and FastAPI's top-level error shapes, also
	// what servers send as the data of an "event: error".
	Message string          `json:"message"`
	Detail  json.RawMessage `json:"detail"`
	// XGroq carries Groq's usage on its last chunk.
	XGroq *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"x_groq"`
}

type wireChoice struct {
	Index        int                 `json:"index"`
	Delta        *wireDelta          `json:"delta"`
	Message      *wireDelta          `json:"message"` // non-streamed answers
	FinishReason openai.FinishReason `json:"finish_reason"`
}

type wireDelta struct {
	openai.ChatCompletionStreamChoiceDelta
	// Content is a string, or (Mistral's reasoning models) an array of
	// typed parts: {"type":"text","text":…} and {"type":"thinking","thinking":[…]}.
	Content json.RawMessage `json:"content"`
	// Reasoning (Groq, OpenRouter, Ollama, newer vLLM) carries what
	// ReasoningContent (DeepSeek, vLLM, llama.cpp) does.
	Reasoning string `json:"reasoning"`
}

type wireUsage struct {
	openai.Usage
	// PromptCacheHitTokens is DeepSeek's name for cached input.
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"`
}

func (u *wireUsage) usage() *Usage {
	out := &Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	if out.CachedTokens == 0 {
		out.CachedTokens = u.PromptCacheHitTokens
	}
	return out
}

// contentParts splits a delta's content into answer text and reasoning.
func contentParts(raw json.RawMessage) (text, thought string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == 'n' {
		return "", ""
	}
	if raw[0] == '"' {
		_ = json.Unmarshal(raw, &text)
		return text, ""
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", ""
	}
	for _, p := range parts {
		switch p.Type {
		case "text":
			text += p.Text
		case "thinking":
			t, _ := contentParts(p.Thinking)
			if t == "" {
				_ = json.Unmarshal(p.Thinking, &t) // a plain string
			}
			thought += t
		}
	}
	return text, thought
}

// wireError is the error object servers send, in their various shapes:
// {"message","type","code"} (OpenAI, DeepSeek, Groq, xAI), a bare string
// (Ollama), {"code": 502, "message", "metadata"} (OpenRouter), or vLLM's
// and FastAPI's top-level {"message"} and {"detail"}. go-openai's APIError
// reads the first shape only (its UnmarshalJSON fails without "message").
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Status  string          `json:"status"` // Gemini: "INVALID_ARGUMENT"
	// FailedGeneration is the model's rejected call (Groq, with code
	// "tool_use_failed").
	FailedGeneration string `json:"failed_generation"`
	// Metadata.Raw is the upstream provider's own message (OpenRouter).
	Metadata *struct {
		Raw          json.RawMessage `json:"raw"`
		ProviderName string          `json:"provider_name"`
	} `json:"metadata"`
}

// parseWireError reads an error object (the value of "error"); ok is false
// when raw holds none.
func parseWireError(raw json.RawMessage) (e wireError, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return e, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return e, false
		}
		return wireError{Message: s}, true
	}
	if json.Unmarshal(raw, &e) != nil {
		return e, false
	}
	if e.Message == "" && e.Metadata != nil && len(e.Metadata.Raw) > 0 {
		e.Message = string(e.Metadata.Raw)
	}
	return e, true
}

// codeStatus is the error's numeric code when it is an HTTP status.
func (e wireError) codeStatus() int {
	var n int
	if json.Unmarshal(e.Code, &n) == nil && n >= 400 && n < 600 {
		return n
	}
	return 0
}

// errorBody extracts the message of an HTTP error response body, whatever
// shape it has. ok is false when the body is not JSON.
func errorBody(b []byte) (msg string, ok bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || (b[0] != '{' && b[0] != '[') {
		return "", false
	}
	if b[0] == '[' { // Gemini wraps its error in an array
		var arr []json.RawMessage
		if json.Unmarshal(b, &arr) != nil || len(arr) == 0 {
			return "", false
		}
		b = arr[0]
	}
	var top struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(b, &top) != nil {
		return "", false
	}
	if e, ok := parseWireError(top.Error); ok && e.Message != "" {
		return e.Message, true
	}
	if top.Message != "" {
		return top.Message, true
	}
	if msg, ok := detailMessage(top.Detail); ok {
		return msg, true
	}
	return string(b), true
}

// detailMessage reads FastAPI's {"detail": …}: a string, or anything else
// quoted as it came.
func detailMessage(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	return string(raw), true
}
