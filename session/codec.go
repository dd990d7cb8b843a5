package session

// The one place events meet JSON: a payload's type name, its encoding into a
// log line and its decoding back. Nothing outside this file marshals or
// unmarshals an event, so the live path hands typed payloads from the turn
// loop to the translator without a round trip through bytes.

import (
	"encoding/json"
	"fmt"
	"time"
)

func (UserMessage) EventType() string      { return TypeUserMessage }
func (UserContext) EventType() string      { return TypeUserContext }
func (UserSteer) EventType() string        { return TypeUserSteer }
func (AssistantChunk) EventType() string   { return TypeAssistantChunk }
func (AttemptAbandoned) EventType() string { return TypeAttemptAbandoned }
func (AssistantMessage) EventType() string { return TypeAssistantMessage }
func (ToolCall) EventType() string         { return TypeToolCall }
func (ToolStatus) EventType() string       { return TypeToolStatus }
func (ToolOutput) EventType() string       { return TypeToolOutput }
func (ToolResult) EventType() string       { return TypeToolResult }
func (Notice) EventType() string           { return TypeNotice }
func (TurnStart) EventType() string        { return TypeTurnStart }
func (TurnEnd) EventType() string          { return TypeTurnEnd }
func (Controls) EventType() string         { return TypeControls }
func (Commands) EventType() string         { return TypeCommands }
func (Plan) EventType() string             { return TypePlan }
func (Title) EventType() string            { return TypeTitle }
func (Usage) EventType() string            { return TypeUsage }
func (ContextReset) EventType() string     { return TypeContextReset }
func (Grant) EventType() string            { return TypeGrant }
func (Archive) EventType() string          { return TypeArchive }
func (SystemPrompt) EventType() string     { return TypeSystemPrompt }
func (Compaction) EventType() string       { return TypeCompaction }
func (CompactionChunk) EventType() string  { return TypeCompactionChunk }
func (Prune) EventType() string            { return TypePrune }
func (ClientPrompt) EventType() string     { return TypeClientPrompt }

func (UserMessage) sealed()      {}
func (UserContext) sealed()      {}
func (UserSteer) sealed()        {}
func (AssistantChunk) sealed()   {}
func (AttemptAbandoned) sealed() {}
func (AssistantMessage) sealed() {}
func (ToolCall) sealed()         {}
func (ToolStatus) sealed()       {}
func (ToolOutput) sealed()       {}
func (ToolResult) sealed()       {}
func (Notice) sealed()           {}
func (TurnStart) sealed()        {}
func (TurnEnd) sealed()          {}
func (Controls) sealed()         {}
func (Commands) sealed()         {}
func (Plan) sealed()             {}
func (Title) sealed()            {}
func (Usage) sealed()            {}
func (ContextReset) sealed()     {}
func (Grant) sealed()            {}
func (Archive) sealed()          {}
func (SystemPrompt) sealed()     {}
func (Compaction) sealed()       {}
func (CompactionChunk) sealed()  {}
func (Prune) sealed()            {}
func (ClientPrompt) sealed()     {}

// decoders read the payload of each event type a log may hold. A new
// persisted event type goes here (TestEveryEventTypeIsKnown fails until it
// does); transient types never reach the disk and have none.
var decoders = map[string]func([]byte) (Payload, error){
	TypeUserMessage:      decode[UserMessage],
	TypeUserContext:      decode[UserContext],
	TypeUserSteer:        decode[UserSteer],
	TypeAssistantChunk:   decode[AssistantChunk],
	TypeAttemptAbandoned: decode[AttemptAbandoned],
	TypeAssistantMessage: decode[AssistantMessage],
	TypeToolCall:         decode[ToolCall],
	TypeToolStatus:       decode[ToolStatus],
	TypeToolResult:       decode[ToolResult],
	TypeNotice:           decode[Notice],
	TypeTurnStart:        decode[TurnStart],
	TypeTurnEnd:          decode[TurnEnd],
	TypeControls:         decode[Controls],
	TypePlan:             decode[Plan],
	TypeTitle:            decode[Title],
	TypeUsage:            decode[Usage],
	TypeContextReset:     decode[ContextReset],
	TypeGrant:            decode[Grant],
	TypeArchive:          decode[Archive],
	TypeSystemPrompt:     decode[SystemPrompt],
	TypeCompaction:       decode[Compaction],
	TypeCompactionChunk:  decode[CompactionChunk],
	TypePrune:            decode[Prune],
	TypeClientPrompt:     decode[ClientPrompt],
}

func decode[T Payload](data []byte) (Payload, error) {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// Known reports whether a persisted log may hold events of this type.
func Known(typ string) bool { return decoders[typ] != nil }

// wireLine is an event as one line of the log holds it.
type wireLine struct {
	Seq  int64           `json:"seq"`
	Time time.Time       `json:"time"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// encodeEvent is the log line of ev, without the newline.
func encodeEvent(ev Event) ([]byte, error) {
	if ev.Payload == nil {
		return nil, fmt.Errorf("event %d has no payload", ev.Seq)
	}
	data, err := json.Marshal(ev.Payload)
	if err != nil {
		return nil, err
	}
	return json.Marshal(wireLine{Seq: ev.Seq, Time: ev.Time, Type: ev.Type(), Data: data})
}

// decodePayload reads the data of an event of type typ. An unknown type is
// reported as such (errUnknownType), apart from damage.
func decodePayload(typ string, data []byte) (Payload, error) {
	dec := decoders[typ]
	if dec == nil {
		return nil, errUnknownType
	}
	return dec(data)
}

var errUnknownType = fmt.Errorf("unknown event type")

// MarshalJSON writes the event as a log line does, for tools and tests
// that show events; the store uses the same encoding.
func (e Event) MarshalJSON() ([]byte, error) { return encodeEvent(e) }

// UnmarshalJSON reads an event in the log-line shape.
func (e *Event) UnmarshalJSON(b []byte) error {
	var l wireLine
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	p, err := decodePayload(l.Type, l.Data)
	if err != nil {
		return fmt.Errorf("event %d (%s): %w", l.Seq, l.Type, err)
	}
	*e = Event{Seq: l.Seq, Time: l.Time, Payload: p}
	return nil
}
