// Package session holds what happens in a session as events: the event
// types, their payloads, and the append-only log. It never talks to the
// editor; package mapping translates events into ACP updates, live and on replay.
package session

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/registry"
)

// Event types. The log is the source of truth for both the editor (through
// the mapping) and the model's context.
const (
	TypeUserMessage    = "user/message"    // UserMessage
	TypeAssistantChunk = "assistant/chunk" // AssistantChunk
	// TypeAttemptAbandoned: a retried model request answered differently,
	// so the chunks of the request before it are void (AttemptAbandoned).
	TypeAttemptAbandoned = "assistant/abandoned"
	TypeToolCall         = "tool/call"   // ToolCall
	TypeToolStatus       = "tool/status" // ToolStatus
	TypeToolOutput       = "tool/output" // ToolOutput; transient, never persisted
	TypeToolResult       = "tool/result" // ToolResult
	TypeNotice           = "notice"      // Notice: a message from the agent itself
	TypeTurnStart        = "turn/start"  // TurnStart
	TypeTurnEnd          = "turn/end"    // TurnEnd
)

// Event is one line of a session log: a sequence number, a time and one
// typed payload. JSON exists only at the store (codec.go); everything else
// reads the payload's Go type.
type Event struct {
	Seq     int64 // contiguous per session, from 1
	Time    time.Time
	Payload Payload
}

// Payload is the closed set of event payloads: one Go type per event type,
// each declared in this package.
type Payload interface {
	// EventType is the type the event is logged under.
	EventType() string
	sealed()
}

// New builds an unsequenced event from a payload.
func New(p Payload) Event { return Event{Payload: p} }

// Type is the event's type, "" for an event without a payload.
func (e Event) Type() string {
	if e.Payload == nil {
		return ""
	}
	return e.Payload.EventType()
}

// UserMessage is the user's prompt, as the ACP content blocks received.
type UserMessage struct {
	Prompt json.RawMessage `json:"prompt"`
	Text   string          `json:"text"` // what the model was given
	// Images are the indexes of the prompt blocks whose image the model was
	// given with Text (an image block, or a resource holding an image
	// blob). The data is stored in Prompt, once.
	Images []int `json:"images,omitempty"`
	// Blocks are Prompt decoded, never stored: the blocks as received on
	// the live path, decoded once on load (WithBlocks), so the fold and
	// the translator read one decode. Nil: read Prompt (PromptBlocks).
	Blocks []acp.ContentBlock `json:"-"`
	// MessageID is the id a v2 client knows the message by (session/prompt
	// answered with it); "" for a v1 prompt.
	MessageID string `json:"messageId,omitempty"`
}

// AssistantChunk is a streamed piece of the model's answer or reasoning.
type AssistantChunk struct {
	Kind      string `json:"kind"` // "text" | "thought"
	Text      string `json:"text"`
	MessageID string `json:"messageId,omitempty"`
}

// AttemptAbandoned follows the chunks of a model request that a retry
// replaced with a different answer: a replay leaves those chunks out, so a
// reloaded thread shows the answer once. Note is what the editor is told
// live, where the chunks are already on screen.
type AttemptAbandoned struct {
	Note string `json:"note,omitempty"`
}

// ToolCall is logged when a call is made, before any policy runs.
type ToolCall struct {
	CallID string          `json:"callId"`
	Name   string          `json:"name"`
	Args   json.RawMessage `json:"args"`
	Parent string          `json:"parent,omitempty"`
	// Agent is the subagent that made the call (its profile's name): its
	// card says so, and its result stays the subagent's (it never enters
	// the session's own context).
	Agent string `json:"agent,omitempty"`
	// Preview is the display data of what the call would do, computed from
	// the files when it was made (registry.Tool.Preview): the card and a
	// permission request show it. Stored, so a replay needs no I/O.
	Preview json.RawMessage `json:"preview,omitempty"`
	// Input is the live call's decoded arguments, so the translator's
	// presenters share the pipeline's one decode; never stored (a replay
	// decodes Args).
	Input *registry.Input `json:"-"`
}

// ToolStatus marks a state change of a running call.
type ToolStatus struct {
	CallID string `json:"callId"`
	Status string `json:"status"` // "awaiting_permission" | "running"
}

// ToolOutput is live output of a running call.
type ToolOutput struct {
	CallID string `json:"callId"`
	Data   string `json:"data"`
}

// ToolResult is the finished call, with the display data presenters need.
type ToolResult struct {
	CallID string          `json:"callId"`
	Result registry.Result `json:"result"`
}

// Notice is text the agent itself says to the user (configuration hints,
// model failures, retries); the model does not see it. Text is how it reads
// as agent text; Severity ("info", "warning", "error"), Title and
// Description are the same news as a notice, for clients that show them
// (an event without a Title gets one made from Text).
type Notice struct {
	Text        string `json:"text"`
	Severity    string `json:"severity,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// TurnStart and TurnEnd bracket one prompt turn.
type TurnStart struct {
	Turn int `json:"turn"`
}

type TurnEnd struct {
	Turn       int    `json:"turn"`
	StopReason string `json:"stopReason"`
	// Error is why the turn failed (session/prompt answered with an error,
	// so there is no stop reason to send); "" for a turn that ended.
	Error string `json:"error,omitempty"`
}

// Transient reports whether events of this type are never persisted.
func Transient(typ string) bool {
	return typ == TypeToolOutput || typ == TypeCommands || typ == TypeJobOutput
}

// Log is a session's append-only event log, in memory.
type Log struct {
	mu     sync.Mutex
	events []Event
	last   int64 // the last sequence number; more than len(events) when damaged lines were left out
	now    func() time.Time
	w      *writer // nil: memory only; see Store (store.go)
	// skipped are the lines of the stored log that could not be used
	// (see Parse): the session was rebuilt without them.
	skipped []*CorruptError
}

// UnsavedLog is an empty log that was meant to be stored but cannot be:
// Err reports why from the start, so the session can tell its editor.
func UnsavedLog(now func() time.Time, err error) *Log {
	l := NewLog(now)
	l.w = &writer{err: err, closed: true}
	return l
}

// Skipped are the damaged lines the log was read without.
func (l *Log) Skipped() []*CorruptError {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.skipped
}

// NewLog returns an empty log. now may be nil (time.Now).
func NewLog(now func() time.Time) *Log {
	if now == nil {
		now = time.Now
	}
	return &Log{now: now}
}

// Append sequences and stores ev (transient events get no sequence and are
// not stored) and returns it as stored.
func (l *Log) Append(ev Event) Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev.Time = l.now().UTC()
	if Transient(ev.Type()) {
		return ev
	}
	if r, ok := ev.Payload.(ToolResult); ok && r.Result.Value != nil {
		// The typed value is for the running program only (Code Mode); the
		// log keeps what a reload reads back, and no more.
		r.Result.Value = nil
		ev.Payload = r
	}
	l.last++
	ev.Seq = l.last
	stored := ev
	if c, ok := ev.Payload.(ToolCall); ok && c.Input != nil {
		// The decoded arguments are for the live translator, which gets
		// them with the returned event; the log keeps the arguments.
		c.Input = nil
		stored.Payload = c
	}
	l.events = append(l.events, stored)
	if l.w != nil {
		l.w.write(stored)
	}
	return ev
}

// Events returns a copy of the stored events.
func (l *Log) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}
