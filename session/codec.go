package session

// The one place events meet JSON: a payload's type name, its encoding into a
// log line and its decoding back. Nothing outside this file marshals or
// unmarshals an event, so the live path hands typed payloads from the turn
// loop to the translator without a round trip through bytes.

import (
	"encoding/json"
	"fmt"
	"strings"
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
func (Rewind) EventType() string           { return TypeRewind }
func (FilesRestored) EventType() string    { return TypeFilesRestored }

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
func (Rewind) sealed()           {}
func (FilesRestored) sealed()    {}

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
	TypeJobStart:         decode[JobStart],
	TypeJobEnd:           decode[JobEnd],
	TypeRewind:           decode[Rewind],
	TypeFilesRestored:    decode[FilesRestored],
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

// A prompt's text usually holds its blocks' texts verbatim (a text block as
// is, an embedded resource's text inside its element), so writing both the
// blocks and the text would store a large prompt twice. The log writes the
// text without every block text of at least sharedMin bytes it holds, and
// where each goes: textBlocks is a list of [offset in the written text,
// prompt block index]. Reading puts them back; a log without textBlocks
// (written before, or a small prompt) has the text whole.
const sharedMin = 1024

type userMessageWire struct {
	Prompt     json.RawMessage `json:"prompt"`
	Text       string          `json:"text"`
	TextBlocks [][2]int        `json:"textBlocks,omitempty"`
	Images     []int           `json:"images,omitempty"`
	MessageID  string          `json:"messageId,omitempty"`
}

// blockTexts are the texts of a prompt's blocks ("" for a block without).
func blockTexts(prompt json.RawMessage) []string {
	var blocks []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Resource *struct {
			Text *string `json:"text"`
		} `json:"resource"`
	}
	if json.Unmarshal(prompt, &blocks) != nil {
		return nil
	}
	out := make([]string, len(blocks))
	for i, b := range blocks {
		switch {
		case b.Type == "text":
			out[i] = b.Text
		case b.Type == "resource" && b.Resource != nil && b.Resource.Text != nil:
			out[i] = *b.Resource.Text
		}
	}
	return out
}

// findBlock is where a block's text starts in text, or -1. Blocks are
// flattened in order, right where the last one ended or after a short
// wrapper (a resource's element), so only the first sharedWindow bytes are
// candidates: a search of the whole text for a long needle can take time
// quadratic in the prompt's size.
func findBlock(text, bt string) int {
	const sharedWindow = 4096
	if len(text) < len(bt) {
		return -1
	}
	if strings.HasPrefix(text, bt) {
		return 0
	}
	probe := bt[:min(len(bt), 64)]
	hay := text[:min(len(text), sharedWindow+len(probe))]
	for off := 0; off < len(hay); {
		k := strings.Index(hay[off:], probe)
		if k < 0 {
			return -1
		}
		if c := off + k; strings.HasPrefix(text[c:], bt) {
			return c
		}
		off += k + 1
	}
	return -1
}

func (m UserMessage) MarshalJSON() ([]byte, error) {
	w := userMessageWire{Prompt: m.Prompt, Text: m.Text, Images: m.Images, MessageID: m.MessageID}
	if len(m.Text) >= sharedMin {
		var rest []byte
		pos := 0
		for i, bt := range blockTexts(m.Prompt) {
			if len(bt) < sharedMin {
				continue
			}
			j := findBlock(m.Text[pos:], bt)
			if j < 0 {
				continue
			}
			rest = append(rest, m.Text[pos:pos+j]...)
			w.TextBlocks = append(w.TextBlocks, [2]int{len(rest), i})
			pos += j + len(bt)
		}
		if w.TextBlocks != nil {
			w.Text = string(append(rest, m.Text[pos:]...))
		}
	}
	return json.Marshal(w)
}

func (m *UserMessage) UnmarshalJSON(b []byte) error {
	var w userMessageWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = UserMessage{Prompt: w.Prompt, Text: w.Text, Images: w.Images, MessageID: w.MessageID}
	if len(w.TextBlocks) == 0 {
		return nil
	}
	texts := blockTexts(w.Prompt)
	var out strings.Builder
	pos := 0
	for _, r := range w.TextBlocks {
		at, i := r[0], r[1]
		if at < pos || at > len(w.Text) || i < 0 || i >= len(texts) || texts[i] == "" {
			return fmt.Errorf("user message: text block reference %v does not fit the text and prompt", r)
		}
		out.WriteString(w.Text[pos:at])
		out.WriteString(texts[i])
		pos = at
	}
	out.WriteString(w.Text[pos:])
	m.Text = out.String()
	return nil
}
