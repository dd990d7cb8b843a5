// Package model is the agent's view of a language model: a request (the
// conversation and the visible tools) in, a stream of text, reasoning, tool
// calls and usage out. Providers: the scripted one here (deterministic tests
// and the offline demo) and OpenAI-compatible HTTP endpoints.
package model

import (
	"context"
	"encoding/json"
	"iter"
	"time"
)

// Role of a message in the conversation.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one entry of the conversation sent to the model.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content,omitempty"`
	Reasoning  string     `json:"reasoning,omitempty"` // assistant reasoning, sent back where the API wants it
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"` // assistant
	ToolCallID string     `json:"toolCallId,omitempty"`
	// Images attached to a user message; only sent to models that accept them.
	Images []Image `json:"images,omitempty"`
}

// Image is an inline image: base64 data and its MIME type.
type Image struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// ToolCall is a complete call the model made.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // JSON text as the model wrote it
}

// ToolSpec describes a tool the model may call.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model call.
type Request struct {
	Messages []Message
	Tools    []ToolSpec
	// ReasoningEffort is OpenAI-style reasoning_effort ("low", "medium",
	// "high"); "" leaves it to the endpoint. Only for models that take one
	// (ReasoningEfforts).
	ReasoningEffort string
}

// Finish says why a response ended.
type Finish string

const (
	FinishStop          Finish = "stop"
	FinishToolCalls     Finish = "tool_calls"
	FinishLength        Finish = "length"
	FinishContentFilter Finish = "content_filter"
)

// Usage counts tokens of one call.
type Usage struct {
	InputTokens   int `json:"inputTokens"`
	OutputTokens  int `json:"outputTokens"`
	ContextWindow int `json:"contextWindow,omitempty"`
	// CachedTokens of the input were served from the provider's prompt cache.
	CachedTokens int `json:"cachedTokens,omitempty"`
	// Estimated: the endpoint reported no usage, so these are estimates
	// (about four characters a token).
	Estimated bool `json:"estimated,omitempty"`
}

// EventKind tells which field of an Event is set.
type EventKind int

const (
	EventText     EventKind = iota // Text: a delta of the answer
	EventThought                   // Text: a delta of the reasoning
	EventToolCall                  // ToolCall: one complete call
	EventUsage                     // Usage
	EventFinish                    // Finish: the last event of a response
	// EventRetry: the attempt failed and the request starts over; Retry
	// says why and when. What the stream yielded before it stands for now:
	// the new attempt's output that repeats it is not yielded again, and
	// what follows continues it.
	EventRetry
	// EventDiscard: the new attempt answered differently from what was
	// yielded before, so all of that is void; the new answer follows
	// from its beginning.
	EventDiscard
	// EventNotice: Text is what the endpoint said about the response
	// after it ended, in the endpoint's words (OpenRouter's "Token limit
	// reached" after finish_reason "length"). The response stands; the
	// user should read it.
	EventNotice
)

// RetryInfo describes one retry of a failed model request.
type RetryInfo struct {
	Attempt int           // the attempt about to start, from 2
	Max     int           // the last attempt allowed
	Delay   time.Duration // the wait before it
	Err     error         // why the previous attempt failed
}

// Event is one item of a response stream.
type Event struct {
	Kind     EventKind
	Text     string
	ToolCall *ToolCall
	Usage    *Usage
	Finish   Finish
	Retry    *RetryInfo
}

// Provider streams model responses. The sequence ends after EventFinish, or
// with an error (the context's error when cancelled).
type Provider interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Event, error]
}
