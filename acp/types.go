package acp

import "encoding/json"

// ---- initialize / auth ----

type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
	Meta    Meta   `json:"_meta,omitempty"`
}

type FileSystemCapabilities struct {
	ReadTextFile  bool `json:"readTextFile,omitempty"`
	WriteTextFile bool `json:"writeTextFile,omitempty"`
	Meta          Meta `json:"_meta,omitempty"`
}

type ClientCapabilities struct {
	FS          FileSystemCapabilities `json:"fs,omitzero"`
	Terminal    bool                   `json:"terminal,omitempty"`
	Auth        *ClientAuthCaps        `json:"auth,omitempty"`
	Session     ClientSessionCaps      `json:"session,omitzero"`
	Elicitation json.RawMessage        `json:"elicitation,omitempty"`
	Meta        Meta                   `json:"_meta,omitempty"`
}

type ClientAuthCaps struct {
	Terminal bool `json:"terminal,omitempty"`
}

// ClientSessionCaps is clientCapabilities.session: what the client can show
// beyond the updates every client takes.
type ClientSessionCaps struct {
	Notices       *Empty                  `json:"notices,omitempty"`    // `notice` updates
	Compaction    *Empty                  `json:"compaction,omitempty"` // compaction_update / compaction_summary_chunk
	ConfigOptions *ClientConfigOptionCaps `json:"configOptions,omitempty"`
	Meta          Meta                    `json:"_meta,omitempty"`
}

// ClientConfigOptionCaps is clientCapabilities.session.configOptions.
type ClientConfigOptionCaps struct {
	Boolean *Empty `json:"boolean,omitempty"` // type "boolean" config options
	Meta    Meta   `json:"_meta,omitempty"`
}

// TerminalOutput reports whether the client opted into Zed's _meta terminal
// convention (clientCapabilities._meta.terminal_output === true).
func (c ClientCapabilities) TerminalOutput() bool {
	v, ok := c.Meta["terminal_output"].(bool)
	return ok && v
}

// TerminalOutputDelta reports whether the client wants live terminal output
// as _meta.terminal_output_delta appends (codex-acp's convention:
// clientCapabilities._meta.terminal_output_delta === true).
func (c ClientCapabilities) TerminalOutputDelta() bool {
	v, ok := c.Meta["terminal_output_delta"].(bool)
	return ok && v
}

// Notices reports whether the client takes `notice` updates.
func (c ClientCapabilities) Notices() bool { return c.Session.Notices != nil }

// Compaction reports whether the client takes the compaction updates.
func (c ClientCapabilities) Compaction() bool { return c.Session.Compaction != nil }

// ElicitationMode reports whether the client takes elicitation/create in
// mode ("form" or "url"): clientCapabilities.elicitation.form or .url
// present and not null.
func (c ClientCapabilities) ElicitationMode(mode string) bool {
	var e map[string]json.RawMessage
	if json.Unmarshal(c.Elicitation, &e) != nil {
		return false
	}
	return decodeFlag(e[mode]) != nil
}

// BooleanConfigOptions reports whether the client takes type "boolean"
// config options.
func (c ClientCapabilities) BooleanConfigOptions() bool {
	return c.Session.ConfigOptions != nil && c.Session.ConfigOptions.Boolean != nil
}

type InitializeRequest struct {
	ProtocolVersion    int                `json:"protocolVersion"`
	ClientCapabilities ClientCapabilities `json:"clientCapabilities,omitzero"`
	ClientInfo         *Implementation    `json:"clientInfo,omitempty"`
	Meta               Meta               `json:"_meta,omitempty"`
}

// The capability flags are left out when false: every one defaults to
// false in the schema, and a client may read a present key as support
// (acp.el shows "image, audio" for {"image": false, "audio": false}).

type PromptCapabilities struct {
	Image           bool `json:"image,omitempty"`
	Audio           bool `json:"audio,omitempty"`
	EmbeddedContext bool `json:"embeddedContext,omitempty"`
}

type McpCapabilities struct {
	HTTP bool `json:"http,omitempty"`
	SSE  bool `json:"sse,omitempty"`
}

// Empty is the `{}` that marks a capability as supported.
type Empty struct{}

// decodeFlag reads a client capability the way the schema's "default on
// error" asks: absent, null or false is off, any other value on, and an
// odd value never fails the whole initialize.
func decodeFlag(b []byte) *Empty {
	switch string(b) {
	case "", "null", "false":
		return nil
	}
	return &Empty{}
}

func (c *ClientSessionCaps) UnmarshalJSON(b []byte) error {
	var w struct {
		Notices       json.RawMessage `json:"notices"`
		Compaction    json.RawMessage `json:"compaction"`
		ConfigOptions json.RawMessage `json:"configOptions"`
		Meta          Meta            `json:"_meta"`
	}
	if json.Unmarshal(b, &w) != nil {
		*c = ClientSessionCaps{} // lenient: a bad session object advertises nothing
		return nil
	}
	*c = ClientSessionCaps{Notices: decodeFlag(w.Notices), Compaction: decodeFlag(w.Compaction), Meta: w.Meta}
	if decodeFlag(w.ConfigOptions) != nil {
		var co struct {
			Boolean json.RawMessage `json:"boolean"`
		}
		_ = json.Unmarshal(w.ConfigOptions, &co)
		c.ConfigOptions = &ClientConfigOptionCaps{Boolean: decodeFlag(co.Boolean)}
	}
	return nil
}

type SessionCapabilities struct {
	List                  *Empty `json:"list,omitempty"`
	Delete                *Empty `json:"delete,omitempty"`
	AdditionalDirectories *Empty `json:"additionalDirectories,omitempty"`
	Resume                *Empty `json:"resume,omitempty"`
	Close                 *Empty `json:"close,omitempty"`
	Fork                  *Empty `json:"fork,omitempty"` // unstable: session/fork
	// SystemPrompt (unstable) advertises systemPrompt on new, load, resume
	// and fork; {} means append only.
	SystemPrompt *SystemPromptCaps `json:"systemPrompt,omitempty"`
	Title        *Empty            `json:"title,omitempty"`   // unstable: session/set_title
	Archive      *Empty            `json:"archive,omitempty"` // unstable: session/archive, session/unarchive
	// Rewind: the agent serves the v2 draft's session/rewind and
	// session/edit_prompt; v1 has no such capability (it is AIR's
	// _meta there), so it goes out only on a v2 connection (V2Initialize).
	Rewind *Empty `json:"-"`
}

// SystemPromptCaps is sessionCapabilities.systemPrompt.
type SystemPromptCaps struct {
	Mode *SystemPromptModeCaps `json:"mode,omitempty"`
}

// SystemPromptModeCaps lists the modes beyond append.
type SystemPromptModeCaps struct {
	Override *Empty `json:"override,omitempty"`
}

type AgentAuthCapabilities struct {
	Logout *Empty `json:"logout,omitempty"`
}

type AgentCapabilities struct {
	LoadSession         bool                  `json:"loadSession,omitempty"`
	PromptCapabilities  PromptCapabilities    `json:"promptCapabilities,omitzero"`
	McpCapabilities     McpCapabilities       `json:"mcpCapabilities,omitzero"`
	SessionCapabilities SessionCapabilities   `json:"sessionCapabilities"`
	Auth                AgentAuthCapabilities `json:"auth,omitzero"`
	// Providers (unstable) advertises providers/list, set and disable.
	Providers *Empty `json:"providers,omitempty"`
	Meta      Meta   `json:"_meta,omitempty"`
}

type AuthMethod struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Type        string            `json:"type,omitempty"` // "" (agent) | "terminal"
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

type InitializeResponse struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
	AuthMethods       []AuthMethod      `json:"authMethods"`
	Meta              Meta              `json:"_meta,omitempty"`
}

type AuthenticateRequest struct {
	MethodID string `json:"methodId"`
	Meta     Meta   `json:"_meta,omitempty"`
}

type AuthenticateResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

type LogoutRequest struct {
	Meta Meta `json:"_meta,omitempty"`
}

type LogoutResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ---- sessions ----

type EnvVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type HTTPHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// McpServer is the union of stdio (no type, or "stdio"), "http" and "sse"
// server configurations, decoded leniently.
type McpServer struct {
	Type    string        `json:"type,omitempty"`
	Name    string        `json:"name"`
	Command string        `json:"command,omitempty"`
	Args    []string      `json:"args,omitzero"`
	Env     []EnvVariable `json:"env,omitzero"`
	URL     string        `json:"url,omitempty"`
	Headers []HTTPHeader  `json:"headers,omitzero"`
	Meta    Meta          `json:"_meta,omitempty"`
}

type NewSessionRequest struct {
	Cwd                   string        `json:"cwd"`
	McpServers            []McpServer   `json:"mcpServers"`
	AdditionalDirectories []string      `json:"additionalDirectories,omitempty"`
	SystemPrompt          *SystemPrompt `json:"systemPrompt,omitempty"`
	Meta                  Meta          `json:"_meta,omitempty"`
}

// System prompt modes.
const (
	SystemPromptAppend   = "append"
	SystemPromptOverride = "override"
)

// SystemPrompt (unstable) is the client's system-level instructions for a
// session: added to the agent's own (append) or in place of them (override).
type SystemPrompt struct {
	Mode    string         `json:"mode"`
	Content []ContentBlock `json:"content"`
	Meta    Meta           `json:"_meta,omitempty"`
}

type SessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type SessionModeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []SessionMode `json:"availableModes"`
}

type ConfigSelectOption struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Config option categories (UX only; clients key shortcuts and icons on them).
const (
	CategoryMode         = "mode"
	CategoryModel        = "model"
	CategoryModelConfig  = "model_config"
	CategoryThoughtLevel = "thought_level"
)

// Config option types.
const (
	ConfigSelect  = "select"
	ConfigBoolean = "boolean"
)

// ConfigOption is a session configuration option: a select (string value) or
// a boolean toggle (bool value; only for clients that advertise
// session.configOptions.boolean).
type ConfigOption struct {
	ID           string               `json:"id"`
	Name         string               `json:"name"`
	Description  string               `json:"description,omitempty"`
	Category     string               `json:"category,omitempty"`
	Type         string               `json:"type"` // "select" | "boolean"
	CurrentValue any                  `json:"currentValue"`
	Options      []ConfigSelectOption `json:"options,omitempty"`
	Meta         Meta                 `json:"_meta,omitempty"`
}

type NewSessionResponse struct {
	SessionID     string            `json:"sessionId"`
	Modes         *SessionModeState `json:"modes,omitempty"`
	ConfigOptions []ConfigOption    `json:"configOptions,omitempty"`
	Meta          Meta              `json:"_meta,omitempty"`
}

type LoadSessionRequest struct {
	SessionID             string        `json:"sessionId"`
	Cwd                   string        `json:"cwd"`
	McpServers            []McpServer   `json:"mcpServers"`
	AdditionalDirectories []string      `json:"additionalDirectories,omitempty"`
	SystemPrompt          *SystemPrompt `json:"systemPrompt,omitempty"`
	Meta                  Meta          `json:"_meta,omitempty"`
}

type LoadSessionResponse struct {
	Modes         *SessionModeState `json:"modes,omitempty"`
	ConfigOptions []ConfigOption    `json:"configOptions,omitempty"`
	Meta          Meta              `json:"_meta,omitempty"`
}

type ResumeSessionRequest struct {
	SessionID             string        `json:"sessionId"`
	Cwd                   string        `json:"cwd"`
	McpServers            []McpServer   `json:"mcpServers,omitempty"`
	AdditionalDirectories []string      `json:"additionalDirectories,omitempty"`
	SystemPrompt          *SystemPrompt `json:"systemPrompt,omitempty"`
	Meta                  Meta          `json:"_meta,omitempty"`
	// ReplayFrom (v2 only, see ParseReplayFrom) is the log position the
	// resume replays from, that event included; nil replays nothing.
	ReplayFrom *int64 `json:"-"`
}

type ResumeSessionResponse = LoadSessionResponse

// ForkSessionRequest (unstable) starts a new session with the history of
// SessionID.
type ForkSessionRequest = ResumeSessionRequest

// ForkSessionResponse answers like session/new.
type ForkSessionResponse = NewSessionResponse

type ListSessionsRequest struct {
	Cwd    string `json:"cwd,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	// Archived (unstable) is "exclude" (the default), "include" or "only".
	Archived string `json:"archived,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// Archive filters of session/list (unstable).
const (
	ArchivedExclude = "exclude"
	ArchivedInclude = "include"
	ArchivedOnly    = "only"
)

// SetSessionTitleRequest (unstable) renames a session.
type SetSessionTitleRequest struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// SetSessionTitleResponse is the title as the session now has it.
type SetSessionTitleResponse struct {
	Title string `json:"title"`
	Meta  Meta   `json:"_meta,omitempty"`
}

type SessionInfo struct {
	SessionID             string   `json:"sessionId"`
	Cwd                   string   `json:"cwd"`
	Title                 string   `json:"title,omitempty"`
	UpdatedAt             string   `json:"updatedAt,omitempty"`
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	Archived              bool     `json:"archived,omitempty"` // unstable
	Meta                  Meta     `json:"_meta,omitempty"`
}

type ListSessionsResponse struct {
	Sessions   []SessionInfo `json:"sessions"`
	NextCursor string        `json:"nextCursor,omitempty"`
	Meta       Meta          `json:"_meta,omitempty"`
}

type SessionRef struct {
	SessionID string `json:"sessionId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

type (
	CloseSessionRequest  = SessionRef
	DeleteSessionRequest = SessionRef
	CancelNotification   = SessionRef
	// ArchiveSessionRequest is session/archive and session/unarchive (unstable).
	ArchiveSessionRequest = SessionRef
)

type EmptyResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

type SetModeRequest struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// SetModelRequest is session/set_model's params (the unstable schema's
// shape before the method was removed).
type SetModelRequest struct {
	SessionID string `json:"sessionId"`
	ModelID   string `json:"modelId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

type SetConfigOptionRequest struct {
	SessionID string          `json:"sessionId"`
	ConfigID  string          `json:"configId"`
	Type      string          `json:"type,omitempty"` // "boolean" for boolean values
	Value     json.RawMessage `json:"value"`
	Meta      Meta            `json:"_meta,omitempty"`
}

type SetConfigOptionResponse struct {
	ConfigOptions []ConfigOption `json:"configOptions"`
	Meta          Meta           `json:"_meta,omitempty"`
}

// ---- prompt ----

type PromptRequest struct {
	SessionID string         `json:"sessionId"`
	Prompt    []ContentBlock `json:"prompt"`
	Meta      Meta           `json:"_meta,omitempty"`
	// MessageID is the id a v2 connection gives the user message the
	// prompt becomes (its session/prompt answers with it at once); "" on v1.
	MessageID string `json:"-"`
}

type StopReason string

const (
	StopEndTurn         StopReason = "end_turn"
	StopMaxTokens       StopReason = "max_tokens"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	StopRefusal         StopReason = "refusal"
	StopCancelled       StopReason = "cancelled"
)

// PromptResponse is the session/prompt result. Usage, the turn's tokens, is
// a root field of the unstable schema only: a client on the stable schema
// flags an unknown key at the root (the conformance kit's ACP-SCHEMA-002),
// so it travels in _meta.usage, where every schema allows it, with the
// unstable field's shape.
type PromptResponse struct {
	StopReason StopReason `json:"stopReason"`
	Usage      *Usage     `json:"-"` // on the wire: _meta.usage
	Meta       Meta       `json:"_meta,omitempty"`
}

// MetaUsage is the _meta key of PromptResponse.Usage.
const MetaUsage = "usage"

type promptResponseWire struct {
	StopReason StopReason `json:"stopReason"`
	Meta       Meta       `json:"_meta,omitempty"`
}

func (r PromptResponse) MarshalJSON() ([]byte, error) {
	w := promptResponseWire{StopReason: r.StopReason, Meta: r.Meta}
	if r.Usage != nil {
		w.Meta = make(Meta, len(r.Meta)+1)
		for k, v := range r.Meta {
			w.Meta[k] = v
		}
		w.Meta[MetaUsage] = r.Usage
	}
	return json.Marshal(w)
}

func (r *PromptResponse) UnmarshalJSON(b []byte) error {
	var w struct {
		promptResponseWire
		Usage *Usage `json:"usage"` // an agent on the unstable schema
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = PromptResponse{StopReason: w.StopReason, Meta: w.Meta, Usage: w.Usage}
	if raw, ok := w.Meta[MetaUsage]; ok {
		delete(r.Meta, MetaUsage)
		if len(r.Meta) == 0 {
			r.Meta = nil
		}
		if bb, err := json.Marshal(raw); err == nil {
			var u Usage
			if json.Unmarshal(bb, &u) == nil {
				r.Usage = &u
			}
		}
	}
	return nil
}

// Usage is the token count of one prompt turn (unstable). The optional
// counts are pointers: nil is "not reported", not zero.
type Usage struct {
	TotalTokens       uint64  `json:"totalTokens"`
	InputTokens       uint64  `json:"inputTokens"`
	OutputTokens      uint64  `json:"outputTokens"`
	ThoughtTokens     *uint64 `json:"thoughtTokens,omitempty"`
	CachedReadTokens  *uint64 `json:"cachedReadTokens,omitempty"`
	CachedWriteTokens *uint64 `json:"cachedWriteTokens,omitempty"`
	Meta              Meta    `json:"_meta,omitempty"`
}

// SteeringRequest is `_session/steering` (an extension): prompt content for
// the session's running turn. _meta.steering.idleBehavior "promptRequired"
// asks for the promptRequired outcome when no turn runs.
type SteeringRequest struct {
	SessionID string         `json:"sessionId"`
	Prompt    []ContentBlock `json:"prompt"`
	Meta      Meta           `json:"_meta,omitempty"`
}

// Steering outcomes, as claude-agent-acp and codex-acp answer.
const (
	SteeringInjected       = "injected"
	SteeringPromptRequired = "promptRequired"
	SteeringNoRunningTurn  = "noRunningTurn"
)

// SteeringResponse says whether the message joined a running turn
// (injected), or why not (promptRequired, reason noRunningTurn: send it as
// a session/prompt).
type SteeringResponse struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
}

// CreateElicitationRequest is elicitation/create: a question for the user,
// as a form (RequestedSchema) or a URL to visit (URL, ElicitationID), tied
// to a session and optionally one of its tool calls.
type CreateElicitationRequest struct {
	SessionID       string          `json:"sessionId"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	Mode            string          `json:"mode"` // "form" | "url"
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	URL             string          `json:"url,omitempty"`
	Meta            Meta            `json:"_meta,omitempty"`
}

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// CreateElicitationResponse is the user's answer: accept (with Content for
// a form), decline or cancel.
type CreateElicitationResponse struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// CompleteElicitationNotification is elicitation/complete: a URL
// elicitation is done.
type CompleteElicitationNotification struct {
	ElicitationID string `json:"elicitationId"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// CancelRequestNotification is $/cancel_request.
type CancelRequestNotification struct {
	RequestID json.RawMessage `json:"requestId"`
}

// ---- permission ----

type PermissionOptionKind string

const (
	AllowOnce    PermissionOptionKind = "allow_once"
	AllowAlways  PermissionOptionKind = "allow_always"
	RejectOnce   PermissionOptionKind = "reject_once"
	RejectAlways PermissionOptionKind = "reject_always"
)

type PermissionOption struct {
	OptionID string               `json:"optionId"`
	Name     string               `json:"name"`
	Kind     PermissionOptionKind `json:"kind"`
	Meta     Meta                 `json:"_meta,omitempty"`
}

type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
	Meta      Meta               `json:"_meta,omitempty"`
}

type PermissionOutcome struct {
	Outcome  string `json:"outcome"` // "cancelled" | "selected"
	OptionID string `json:"optionId,omitempty"`
}

type RequestPermissionResponse struct {
	Outcome PermissionOutcome `json:"outcome"`
	Meta    Meta              `json:"_meta,omitempty"`
}

// ---- client file system ----

type ReadTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Line      *int   `json:"line,omitempty"`
	Limit     *int   `json:"limit,omitempty"`
	Meta      Meta   `json:"_meta,omitempty"`
}

type ReadTextFileResponse struct {
	Content string `json:"content"`
	Meta    Meta   `json:"_meta,omitempty"`
}

type WriteTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// ---- client terminals ----

type CreateTerminalRequest struct {
	SessionID       string        `json:"sessionId"`
	Command         string        `json:"command"`
	Args            []string      `json:"args,omitempty"`
	Env             []EnvVariable `json:"env,omitempty"`
	Cwd             string        `json:"cwd,omitempty"`
	OutputByteLimit *int64        `json:"outputByteLimit,omitempty"`
	Meta            Meta          `json:"_meta,omitempty"`
}

type CreateTerminalResponse struct {
	TerminalID string `json:"terminalId"`
	Meta       Meta   `json:"_meta,omitempty"`
}

type TerminalRequest struct {
	SessionID  string `json:"sessionId"`
	TerminalID string `json:"terminalId"`
	Meta       Meta   `json:"_meta,omitempty"`
}

type TerminalExitStatus struct {
	ExitCode *int    `json:"exitCode,omitempty"`
	Signal   *string `json:"signal,omitempty"`
}

type TerminalOutputResponse struct {
	Output     string              `json:"output"`
	Truncated  bool                `json:"truncated"`
	ExitStatus *TerminalExitStatus `json:"exitStatus,omitempty"`
	Meta       Meta                `json:"_meta,omitempty"`
}
