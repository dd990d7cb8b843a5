package model

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// request converts the conversation to go-openai's request; the library
// marshals it and sets stream: true.
func (p *OpenAI) request(req *Request) openai.ChatCompletionRequest {
	out := openai.ChatCompletionRequest{
		Model:         p.o.Model,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Messages:      make([]openai.ChatCompletionMessage, 0, len(req.Messages)),
	}
	if reasoningModel(p.o.Model) {
		// OpenAI's reasoning models take max_completion_tokens only.
		out.MaxCompletionTokens = p.o.MaxTokens
		out.ReasoningEffort = req.ReasoningEffort
	} else {
		// max_tokens is what DeepSeek, Ollama, vLLM and llama.cpp read; the
		// newer field is OpenAI's alone.
		//lint:ignore SA1019 go-openai deprecates it for OpenAI's API; the other servers read no other field
		out.MaxTokens = p.o.MaxTokens
	}
	for _, m := range req.Messages {
		w := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		switch m.Role {
		case RoleAssistant:
			// Reasoning of an earlier turn goes back in the field the
			// endpoint sent it in: DeepSeek wants reasoning_content (and
			// requires it on turns that called tools); endpoint.Do moves it
			// to reasoning for the servers that read that.
			w.ReasoningContent = m.Reasoning
			for _, c := range m.ToolCalls {
				args := string(c.Arguments)
				if args == "" {
					args = "{}"
				}
				w.ToolCalls = append(w.ToolCalls, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: c.Name, Arguments: args}})
			}
		case RoleTool:
			if m.Content == "" {
				w.Content = "(no output)" // several servers reject an empty tool message
			}
		case RoleUser:
			if len(m.Images) > 0 && p.o.Images {
				w.Content = ""
				if m.Content != "" {
					w.MultiContent = append(w.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: m.Content})
				}
				for _, img := range m.Images {
					w.MultiContent = append(w.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL,
						ImageURL: &openai.ChatMessageImageURL{URL: "data:" + img.MimeType + ";base64," + img.Data}})
				}
			}
		}
		out.Messages = append(out.Messages, w)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return out
}

// renameReasoning moves the reasoning of earlier assistant turns in the
// request body from reasoning_content, the one field go-openai's
// ChatCompletionMessage marshals it in, to reasoning, for the endpoints
// that read it there: Groq refuses reasoning_content; OpenRouter and
// Ollama read reasoning.
func renameReasoning(req *http.Request) error {
	if req.Body == nil {
		return nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return err
	}
	// Message content is a JSON string, so the key's bytes appear only
	// where some object has that key.
	if bytes.Contains(b, []byte(`"reasoning_content":`)) {
		var top map[string]json.RawMessage
		var msgs []map[string]json.RawMessage
		if err := json.Unmarshal(b, &top); err != nil {
			return err
		}
		if err := json.Unmarshal(top["messages"], &msgs); err != nil {
			return err
		}
		for _, m := range msgs {
			if r, ok := m["reasoning_content"]; ok {
				m["reasoning"] = r
				delete(m, "reasoning_content")
			}
		}
		if top["messages"], err = json.Marshal(msgs); err != nil {
			return err
		}
		if b, err = json.Marshal(top); err != nil {
			return err
		}
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.ContentLength = int64(len(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return nil
}

// ReasoningEfforts are the reasoning_effort values a model takes, in
// increasing effort; nil for a model that takes none (the endpoint would
// refuse the field, or ignore it).
func ReasoningEfforts(name string) []string {
	if reasoningModel(name) {
		return []string{"low", "medium", "high"}
	}
	return nil
}

func reasoningModel(name string) bool {
	for _, pre := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}
