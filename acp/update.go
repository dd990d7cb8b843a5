package acp

import (
	"encoding/json"
	"fmt"
)

// SessionNotification is the params of session/update.
type SessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    Update `json:"update"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// Update is one session/update variant. The set is closed: the types in this
// file are the only implementations.
type Update interface {
	// UpdateKind is the sessionUpdate discriminator value.
	UpdateKind() string
}

type ToolKind string

const (
	KindRead       ToolKind = "read"
	KindEdit       ToolKind = "edit"
	KindDelete     ToolKind = "delete"
	KindMove       ToolKind = "move"
	KindSearch     ToolKind = "search"
	KindExecute    ToolKind = "execute"
	KindThink      ToolKind = "think"
	KindFetch      ToolKind = "fetch"
	KindSwitchMode ToolKind = "switch_mode"
	KindOther      ToolKind = "other"
)

type ToolCallStatus string

const (
	StatusPending    ToolCallStatus = "pending"
	StatusInProgress ToolCallStatus = "in_progress"
	StatusCompleted  ToolCallStatus = "completed"
	StatusFailed     ToolCallStatus = "failed"
)

// ToolCallLocation is a file (absolute path) and optional 1-based line.
type ToolCallLocation struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ToolCallContent is content (a ContentBlock), a diff or a terminal reference.
type ToolCallContent struct {
	Type       string        `json:"type"` // "content" | "diff" | "terminal"
	Content    *ContentBlock `json:"content,omitempty"`
	Path       string        `json:"path,omitempty"`
	OldText    *string       `json:"-"`
	NewText    string        `json:"-"`
	TerminalID string        `json:"terminalId,omitempty"`
	Meta       Meta          `json:"_meta,omitempty"`
}

// ContentItem wraps a content block for a tool card.
func ContentItem(b ContentBlock) ToolCallContent {
	return ToolCallContent{Type: "content", Content: &b}
}

// DiffItem is a diff card item; oldText nil means a new file.
func DiffItem(path string, oldText *string, newText string) ToolCallContent {
	return ToolCallContent{Type: "diff", Path: path, OldText: oldText, NewText: newText}
}

// TerminalItem embeds a terminal by id.
func TerminalItem(id string) ToolCallContent {
	return ToolCallContent{Type: "terminal", TerminalID: id}
}

func (c ToolCallContent) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case "content":
		if c.Content == nil {
			return nil, fmt.Errorf("acp: content item without content")
		}
		return json.Marshal(struct {
			Type    string       `json:"type"`
			Content ContentBlock `json:"content"`
			Meta    Meta         `json:"_meta,omitempty"`
		}{c.Type, *c.Content, c.Meta})
	case "diff":
		return json.Marshal(struct {
			Type    string  `json:"type"`
			Path    string  `json:"path"`
			OldText *string `json:"oldText"`
			NewText string  `json:"newText"`
			Meta    Meta    `json:"_meta,omitempty"`
		}{c.Type, c.Path, c.OldText, c.NewText, c.Meta})
	case "terminal":
		return json.Marshal(struct {
			Type       string `json:"type"`
			TerminalID string `json:"terminalId"`
			Meta       Meta   `json:"_meta,omitempty"`
		}{c.Type, c.TerminalID, c.Meta})
	}
	return nil, fmt.Errorf("acp: unknown tool call content type %q", c.Type)
}

func (c *ToolCallContent) UnmarshalJSON(b []byte) error {
	var w struct {
		Type       string        `json:"type"`
		Content    *ContentBlock `json:"content"`
		Path       string        `json:"path"`
		OldText    *string       `json:"oldText"`
		NewText    string        `json:"newText"`
		TerminalID string        `json:"terminalId"`
		Meta       Meta          `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = ToolCallContent{Type: w.Type, Content: w.Content, Path: w.Path, OldText: w.OldText,
		NewText: w.NewText, TerminalID: w.TerminalID, Meta: w.Meta}
	return nil
}

// ToolCall is the tool_call update: a new card (or an upsert of one).
type ToolCall struct {
	ToolCallID string             `json:"toolCallId"`
	Title      string             `json:"title"`
	Name       string             `json:"name,omitempty"` // the tool's programmatic name (registry name)
	Kind       ToolKind           `json:"kind,omitempty"`
	Status     ToolCallStatus     `json:"status,omitempty"`
	Content    []ToolCallContent  `json:"content,omitzero"`
	Locations  []ToolCallLocation `json:"locations,omitzero"`
	RawInput   json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage    `json:"rawOutput,omitempty"`
	Meta       Meta               `json:"_meta,omitempty"`
}

// ToolCallUpdate changes fields of a known card. A nil field is left as it
// was; a non-nil Content or Locations slice (even empty) replaces the whole array.
type ToolCallUpdate struct {
	ToolCallID string             `json:"toolCallId"`
	Title      *string            `json:"title,omitempty"`
	Name       string             `json:"name,omitempty"` // "" leaves the name as it was
	Kind       *ToolKind          `json:"kind,omitempty"`
	Status     *ToolCallStatus    `json:"status,omitempty"`
	Content    []ToolCallContent  `json:"content,omitzero"`
	Locations  []ToolCallLocation `json:"locations,omitzero"`
	RawInput   json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage    `json:"rawOutput,omitempty"`
	Meta       Meta               `json:"_meta,omitempty"`
}

// ContentChunk is the payload of the three message-chunk variants.
type ContentChunk struct {
	Content   ContentBlock `json:"content"`
	MessageID string       `json:"messageId,omitempty"`
	Meta      Meta         `json:"_meta,omitempty"`
}

type (
	UserMessageChunk  ContentChunk
	AgentMessageChunk ContentChunk
	AgentThoughtChunk ContentChunk
)

type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"` // high | medium | low
	Status   string `json:"status"`   // pending | in_progress | completed
	Meta     Meta   `json:"_meta,omitempty"`
}

type Plan struct {
	Entries []PlanEntry `json:"entries"`
	Meta    Meta        `json:"_meta,omitempty"`
}

type CommandInput struct {
	Hint string `json:"hint"`
}

type AvailableCommand struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *CommandInput `json:"input,omitempty"`
	Meta        Meta          `json:"_meta,omitempty"`
}

type AvailableCommandsUpdate struct {
	AvailableCommands []AvailableCommand `json:"availableCommands"`
	Meta              Meta               `json:"_meta,omitempty"`
}

type CurrentModeUpdate struct {
	CurrentModeID string `json:"currentModeId"`
	Meta          Meta   `json:"_meta,omitempty"`
}

type ConfigOptionUpdate struct {
	ConfigOptions []ConfigOption `json:"configOptions"`
	Meta          Meta           `json:"_meta,omitempty"`
}

type SessionInfoUpdate struct {
	Title     *string `json:"title,omitempty"`
	UpdatedAt *string `json:"updatedAt,omitempty"`
	Meta      Meta    `json:"_meta,omitempty"`
}

type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

type UsageUpdate struct {
	Used uint64 `json:"used"`
	Size uint64 `json:"size"`
	Cost *Cost  `json:"cost,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// Notice severities.
const (
	NoticeInfo    = "info"
	NoticeWarning = "warning"
	NoticeError   = "error"
)

// Notice is out-of-band status for the user (a retry, a dead MCP server),
// sent only to clients that set clientCapabilities.session.notices. It is
// not session history.
type Notice struct {
	Severity    string `json:"severity"`
	Title       string `json:"title"` // non-empty, plain text, stands alone
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// Compaction statuses.
const (
	CompactionInProgress = "in_progress"
	CompactionCompleted  = "completed"
	CompactionFailed     = "failed"
	CompactionCancelled  = "cancelled"
)

// CompactionUpdate is an upsert of one context compaction, by id; sent only
// to clients that set clientCapabilities.session.compaction. Summary nil
// leaves the stored summary as it was.
type CompactionUpdate struct {
	CompactionID string         `json:"compactionId"`
	Status       string         `json:"status"`
	Summary      []ContentBlock `json:"summary,omitempty"`
	Error        string         `json:"error,omitempty"`
	Meta         Meta           `json:"_meta,omitempty"`
}

// CompactionSummaryChunk appends one block to a compaction's summary.
type CompactionSummaryChunk struct {
	CompactionID string       `json:"compactionId"`
	Content      ContentBlock `json:"content"`
	Meta         Meta         `json:"_meta,omitempty"`
}

func (Notice) UpdateKind() string                 { return "notice" }
func (CompactionUpdate) UpdateKind() string       { return "compaction_update" }
func (CompactionSummaryChunk) UpdateKind() string { return "compaction_summary_chunk" }

func (UserMessageChunk) UpdateKind() string        { return "user_message_chunk" }
func (AgentMessageChunk) UpdateKind() string       { return "agent_message_chunk" }
func (AgentThoughtChunk) UpdateKind() string       { return "agent_thought_chunk" }
func (ToolCall) UpdateKind() string                { return "tool_call" }
func (ToolCallUpdate) UpdateKind() string          { return "tool_call_update" }
func (Plan) UpdateKind() string                    { return "plan" }
func (AvailableCommandsUpdate) UpdateKind() string { return "available_commands_update" }
func (CurrentModeUpdate) UpdateKind() string       { return "current_mode_update" }
func (ConfigOptionUpdate) UpdateKind() string      { return "config_option_update" }
func (SessionInfoUpdate) UpdateKind() string       { return "session_info_update" }
func (UsageUpdate) UpdateKind() string             { return "usage_update" }

// MarshalJSON writes the update with its sessionUpdate discriminator first.
func (n SessionNotification) MarshalJSON() ([]byte, error) {
	if n.Update == nil {
		return nil, fmt.Errorf("acp: session/update without an update")
	}
	body, err := json.Marshal(n.Update)
	if err != nil {
		return nil, err
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("acp: update %T did not marshal to an object", n.Update)
	}
	head := `{"sessionUpdate":` + quote(n.Update.UpdateKind())
	if string(body) != "{}" {
		head += ","
	}
	// Assembled by hand: encoding the wrapper with encoding/json would
	// compact the whole update once more, and updates are most of the
	// bytes a session sends.
	out := make([]byte, 0, len(body)+len(head)+len(n.SessionID)+32)
	out = append(out, `{"sessionId":`...)
	out = append(out, quote(n.SessionID)...)
	out = append(out, `,"update":`...)
	out = append(out, head...)
	out = append(out, body[1:]...)
	if len(n.Meta) > 0 {
		meta, err := json.Marshal(n.Meta)
		if err != nil {
			return nil, err
		}
		out = append(out, `,"_meta":`...)
		out = append(out, meta...)
	}
	return append(out, '}'), nil
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// UnmarshalJSON decodes the update variant named by sessionUpdate.
func (n *SessionNotification) UnmarshalJSON(b []byte) error {
	var w struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
		Meta      Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	u, err := DecodeUpdate(w.Update)
	if err != nil {
		return err
	}
	*n = SessionNotification{SessionID: w.SessionID, Update: u, Meta: w.Meta}
	return nil
}

// DecodeUpdate decodes one update object by its sessionUpdate discriminator.
func DecodeUpdate(b []byte) (Update, error) {
	var head struct {
		Kind string `json:"sessionUpdate"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, err
	}
	var u Update
	switch head.Kind {
	case "user_message_chunk":
		u = &UserMessageChunk{}
	case "agent_message_chunk":
		u = &AgentMessageChunk{}
	case "agent_thought_chunk":
		u = &AgentThoughtChunk{}
	case "tool_call":
		u = &ToolCall{}
	case "tool_call_update":
		u = &ToolCallUpdate{}
	case "plan":
		u = &Plan{}
	case "available_commands_update":
		u = &AvailableCommandsUpdate{}
	case "current_mode_update":
		u = &CurrentModeUpdate{}
	case "config_option_update":
		u = &ConfigOptionUpdate{}
	case "session_info_update":
		u = &SessionInfoUpdate{}
	case "usage_update":
		u = &UsageUpdate{}
	case "notice":
		u = &Notice{}
	case "compaction_update":
		u = &CompactionUpdate{}
	case "compaction_summary_chunk":
		u = &CompactionSummaryChunk{}
	default:
		return nil, fmt.Errorf("unknown sessionUpdate %q", head.Kind)
	}
	if err := json.Unmarshal(b, u); err != nil {
		return nil, err
	}
	return u, nil
}
