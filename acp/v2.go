package acp

import (
	"context"
	"encoding/json"
)

// ACP v2 (a draft, served as experimental) beside v1 on one connection.
//
// A client that asks for protocolVersion 2 or above in initialize gets a v2
// connection (conn.go negotiates; v2conn.go serves it); any other gets v1,
// as before. The agent behind both is the same: v2's requests are decoded
// here into the v1 request types the agent takes, and its answers
// re-expressed in v2's shapes. What the agent sends in session/update comes
// already in the connection's dialect: a v2 session translates its events
// with the v2 translator (package mappingv2), whose updates are the types
// below.
//
// The draft's schema is the SDK 2.4.0 `schema/v2/schema.unstable.json`;
// names below follow it.

// ProtocolVersion2 is the draft version a client asks for to speak v2.
const ProtocolVersion2 = 2

// CodeUnsupportedVersion is v2's error for an initialize asking for a
// version the agent cannot serve (below 1).
const CodeUnsupportedVersion = -32022

// MetaExperimental is the initialize _meta key that tells a v2 client the
// dialect is a draft this agent serves experimentally.
const MetaExperimental = "acpBridge/experimental"

// Methods of v2 that v1 names otherwise or lacks.
const (
	MethodAuthLogin  = "auth/login"
	MethodAuthLogout = "auth/logout"
)

// V2InitializeRequest is v2's initialize params.
type V2InitializeRequest struct {
	ProtocolVersion int                  `json:"protocolVersion"`
	Info            *Implementation      `json:"info,omitempty"`
	Capabilities    V2ClientCapabilities `json:"capabilities,omitzero"`
	Meta            Meta                 `json:"_meta,omitempty"`
}

// V2ClientCapabilities is what a v2 client can do. There is no fs or
// terminal: in v2 the agent reads and writes the disk and runs commands
// itself, showing them as display terminals.
type V2ClientCapabilities struct {
	Auth        json.RawMessage `json:"auth,omitempty"` // {terminal: {}}
	Elicitation json.RawMessage `json:"elicitation,omitempty"`
	Meta        Meta            `json:"_meta,omitempty"`
}

// V1 is the v1 capabilities the agent reads for this client: no fs, no
// client terminals; terminal auth when the client runs terminal methods.
// Elicitation is left out: v2's elicitation shapes differ from v1's, and the
// question tool ends the turn with its question where it cannot ask.
func (c V2ClientCapabilities) V1() ClientCapabilities {
	out := ClientCapabilities{Meta: c.Meta}
	var auth struct {
		Terminal json.RawMessage `json:"terminal"`
	}
	if json.Unmarshal(c.Auth, &auth) == nil && decodeFlag(auth.Terminal) != nil {
		out.Auth = &ClientAuthCaps{Terminal: true}
	}
	// A v2 client takes every update the v2 schema has: notices,
	// compactions and boolean config options are not capabilities there.
	out.Session = ClientSessionCaps{Notices: &Empty{}, Compaction: &Empty{},
		ConfigOptions: &ClientConfigOptionCaps{Boolean: &Empty{}}}
	return out
}

// V2InitializeResponse is v2's initialize result.
type V2InitializeResponse struct {
	ProtocolVersion int                 `json:"protocolVersion"`
	Info            Implementation      `json:"info"`
	Capabilities    V2AgentCapabilities `json:"capabilities"`
	AuthMethods     []V2AuthMethod      `json:"authMethods,omitempty"`
	Meta            Meta                `json:"_meta,omitempty"`
}

type V2AgentCapabilities struct {
	Session *V2SessionCapabilities `json:"session,omitempty"`
	Meta    Meta                   `json:"_meta,omitempty"`
}

// V2SessionCapabilities: present ({}) means new, list, resume, close,
// prompt and cancel are served.
type V2SessionCapabilities struct {
	Prompt                *V2PromptCapabilities `json:"prompt,omitempty"`
	Mcp                   *V2McpCapabilities    `json:"mcp,omitempty"`
	Delete                *Empty                `json:"delete,omitempty"`
	AdditionalDirectories *Empty                `json:"additionalDirectories,omitempty"`
	// Rewind: session/rewind, and session/edit_prompt when EditPrompt
	// (the rewind draft's agentCapabilities.session.rewind).
	Rewind *V2RewindCapabilities `json:"rewind,omitempty"`
}

type V2RewindCapabilities struct {
	EditPrompt bool `json:"edit_prompt"`
}

type V2PromptCapabilities struct {
	Image           *Empty `json:"image,omitempty"`
	Audio           *Empty `json:"audio,omitempty"`
	EmbeddedContext *Empty `json:"embeddedContext,omitempty"`
}

type V2McpCapabilities struct {
	Stdio *Empty `json:"stdio,omitempty"`
	HTTP  *Empty `json:"http,omitempty"`
}

// V2AuthMethod is an auth method: type "agent" (auth/login) or "terminal"
// (the client runs the agent's binary with Args).
type V2AuthMethod struct {
	Type        string        `json:"type"`
	MethodID    string        `json:"methodId"`
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Args        []string      `json:"args,omitempty"`
	Env         []EnvVariable `json:"env,omitempty"`
}

// V2Initialize re-expresses the agent's v1 initialize result for a v2
// client: the capabilities v2 has, the session methods v2 requires (only
// when the agent keeps sessions), and v2 marked experimental in _meta.
func V2Initialize(r *InitializeResponse) *V2InitializeResponse {
	out := &V2InitializeResponse{ProtocolVersion: ProtocolVersion2}
	if r.AgentInfo != nil {
		out.Info = *r.AgentInfo
	}
	out.Meta = Meta{}
	for k, v := range r.Meta {
		out.Meta[k] = v
	}
	out.Meta[MetaExperimental] = map[string]any{"protocolVersion": ProtocolVersion2,
		"note": "ACP v2 is a draft; this agent serves it experimentally and may change with it"}
	ac := r.AgentCapabilities
	if sc := ac.SessionCapabilities; sc.List != nil && sc.Resume != nil && sc.Close != nil {
		s := &V2SessionCapabilities{Delete: sc.Delete, AdditionalDirectories: sc.AdditionalDirectories,
			Mcp: &V2McpCapabilities{Stdio: &Empty{}}}
		if sc.Rewind != nil {
			s.Rewind = &V2RewindCapabilities{EditPrompt: true}
		}
		if ac.McpCapabilities.HTTP {
			s.Mcp.HTTP = &Empty{}
		}
		pc := ac.PromptCapabilities
		if pc.Image || pc.Audio || pc.EmbeddedContext {
			s.Prompt = &V2PromptCapabilities{Image: flag(pc.Image), Audio: flag(pc.Audio), EmbeddedContext: flag(pc.EmbeddedContext)}
		}
		out.Capabilities.Session = s
	}
	// A method list obliges the agent to serve auth/login and
	// auth/logout: advertised only when logout works.
	if ac.Auth.Logout != nil {
		for _, m := range r.AuthMethods {
			v := V2AuthMethod{Type: m.Type, MethodID: m.ID, Name: m.Name, Description: m.Description, Args: m.Args}
			if v.Type == "" {
				v.Type = "agent"
			}
			for k, val := range m.Env {
				v.Env = append(v.Env, EnvVariable{Name: k, Value: val})
			}
			out.AuthMethods = append(out.AuthMethods, v)
		}
	}
	return out
}

func flag(on bool) *Empty {
	if on {
		return &Empty{}
	}
	return nil
}

// V2ConfigOption is a session config option as v2 names its fields
// (configId for id). Modes are the option of category "mode".
type V2ConfigOption struct {
	ConfigID     string               `json:"configId"`
	Name         string               `json:"name"`
	Description  string               `json:"description,omitempty"`
	Category     string               `json:"category,omitempty"`
	Type         string               `json:"type"`
	CurrentValue any                  `json:"currentValue"`
	Options      []ConfigSelectOption `json:"options,omitempty"`
	Meta         Meta                 `json:"_meta,omitempty"`
}

// V2ConfigOptions re-expresses v1 config options.
func V2ConfigOptions(opts []ConfigOption) []V2ConfigOption {
	out := make([]V2ConfigOption, 0, len(opts))
	for _, o := range opts {
		out = append(out, V2ConfigOption{ConfigID: o.ID, Name: o.Name, Description: o.Description, Category: o.Category,
			Type: o.Type, CurrentValue: o.CurrentValue, Options: o.Options, Meta: o.Meta})
	}
	return out
}

type V2NewSessionResponse struct {
	SessionID     string           `json:"sessionId"`
	ConfigOptions []V2ConfigOption `json:"configOptions"`
	Meta          Meta             `json:"_meta,omitempty"`
}

// V2ResumeSessionRequest is session/resume with v2's replay cursor.
type V2ResumeSessionRequest struct {
	ResumeSessionRequest
	ReplayFrom json.RawMessage `json:"replayFrom,omitempty"`
}

// ReplayCursorType is this agent's own replay cursor (v2 reserves types
// starting with "_" for implementations): {"type": "_seq", "seq": N}
// replays the session log from its event N on, N included. Every idle
// state_update carries the cursor of the log's next event in
// _meta[MetaReplayFrom], so a client that saw it resumes from there.
const ReplayCursorType = "_seq"

// MetaReplayFrom is the _meta key of a replay cursor.
const MetaReplayFrom = "replayFrom"

// ReplayCursor is the cursor of log position seq.
func ReplayCursor(seq int64) map[string]any {
	return map[string]any{"type": ReplayCursorType, "seq": seq}
}

// ParseReplayFrom reads a replayFrom value: nil (absent or null: no
// replay), 1 for {"type":"start"} (the log's first event), or the seq of a
// "_seq" cursor. Any other cursor is -32602, as the draft requires.
func ParseReplayFrom(raw json.RawMessage) (*int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var c struct {
		Type string          `json:"type"`
		Seq  json.RawMessage `json:"seq"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, InvalidParams("invalid params: replayFrom must be an object with a type")
	}
	switch c.Type {
	case "start":
		one := int64(1)
		return &one, nil
	case ReplayCursorType:
		var n int64
		if json.Unmarshal(c.Seq, &n) != nil || n < 1 {
			return nil, InvalidParams("invalid params: a %q replay cursor needs seq, a log position from 1", ReplayCursorType)
		}
		return &n, nil
	}
	return nil, InvalidParams("invalid params: unsupported replayFrom cursor type %q (this agent takes \"start\" and %q)", c.Type, ReplayCursorType)
}

type V2ResumeSessionResponse struct {
	ConfigOptions []V2ConfigOption `json:"configOptions"`
	Meta          Meta             `json:"_meta,omitempty"`
}

// V2PromptResponse answers session/prompt at once: the id of the user
// message the prompt became. Progress follows as state_update.
type V2PromptResponse struct {
	MessageID string `json:"messageId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// V2SetConfigOptionRequest is v2's session/set_config_option: type "id"
// (a select's value id) or "boolean".
type V2SetConfigOptionRequest struct {
	SessionID string          `json:"sessionId"`
	ConfigID  string          `json:"configId"`
	Type      string          `json:"type"`
	Value     json.RawMessage `json:"value"`
	Meta      Meta            `json:"_meta,omitempty"`
}

type V2SetConfigOptionResponse struct {
	ConfigOptions []V2ConfigOption `json:"configOptions"`
	Meta          Meta             `json:"_meta,omitempty"`
}

// ---- session/update variants v2 adds or reshapes ----

// Session states of state_update.
const (
	StateRunning        = "running"
	StateRequiresAction = "requires_action"
	StateIdle           = "idle"
)

// StopError is v2's stop reason for work that failed.
const StopError StopReason = "error"

// V2StateUpdate is the session's foreground state: running, requires
// action, or idle with why the work stopped.
type V2StateUpdate struct {
	State      string     `json:"state"`
	StopReason StopReason `json:"stopReason,omitempty"` // idle only
	Error      *Error     `json:"error,omitempty"`      // idle with StopError
	Meta       Meta       `json:"_meta,omitempty"`
}

// V2UserMessage is an upsert of a user message, by id: Content replaces it whole.
type V2UserMessage struct {
	MessageID string         `json:"messageId"`
	Content   []ContentBlock `json:"content,omitempty"`
	Meta      Meta           `json:"_meta,omitempty"`
}

// V2HistoryTruncated says the history was rewound: everything after
// LastMessageID is gone (the rewind draft's history_truncated; "" when
// nothing is kept).
type V2HistoryTruncated struct {
	LastMessageID string `json:"lastMessageId"`
}

// V2ToolCallUpdate is v2's one tool call update, an upsert by id: absent
// fields keep their value; Content and Locations replace theirs.
type V2ToolCallUpdate struct {
	ToolCallID string              `json:"toolCallId"`
	Name       string              `json:"name,omitempty"`
	Title      *string             `json:"title,omitempty"`
	Kind       *ToolKind           `json:"kind,omitempty"`
	Status     *ToolCallStatus     `json:"status,omitempty"`
	Content    []V2ToolCallContent `json:"content,omitzero"`
	Locations  []ToolCallLocation  `json:"locations,omitzero"`
	RawInput   json.RawMessage     `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage     `json:"rawOutput,omitempty"`
	Meta       Meta                `json:"_meta,omitempty"`
}

// V2ToolCallContent is content, a diff (file changes plus a git patch) or
// a display terminal.
type V2ToolCallContent struct {
	Type       string         `json:"type"` // "content" | "diff" | "terminal"
	Content    *ContentBlock  `json:"content,omitempty"`
	Changes    []V2DiffChange `json:"changes,omitempty"`
	Patch      *V2DiffPatch   `json:"patch,omitempty"`
	TerminalID string         `json:"terminalId,omitempty"`
	Meta       Meta           `json:"_meta,omitempty"`
}

func (c V2ToolCallContent) MarshalJSON() ([]byte, error) {
	type plain V2ToolCallContent
	if c.Type == "diff" && c.Changes == nil {
		c.Changes = []V2DiffChange{} // required, even empty
	}
	return json.Marshal(plain(c))
}

// V2DiffChange is one file a diff touches: operation add, delete or modify.
type V2DiffChange struct {
	Operation string `json:"operation"`
	Path      string `json:"path"`
	FileType  string `json:"fileType,omitempty"`
}

// V2DiffPatch is the diff's text, format "git_patch".
type V2DiffPatch struct {
	Format string `json:"format"`
	Text   string `json:"text"`
}

// V2ToolCallContentChunk appends one item to a tool call's content.
type V2ToolCallContentChunk struct {
	ToolCallID string            `json:"toolCallId"`
	Content    V2ToolCallContent `json:"content"`
}

// V2TerminalExitStatus is how a display terminal's process ended.
type V2TerminalExitStatus struct {
	ExitCode *int    `json:"exitCode"`
	Signal   *string `json:"signal"`
}

// V2TerminalOutput is a display terminal's whole output so far (base64).
type V2TerminalOutput struct {
	Data []byte `json:"data"` // encoding/json writes []byte as base64
}

// V2TerminalUpdate is an upsert of an agent-owned display terminal.
type V2TerminalUpdate struct {
	TerminalID string                `json:"terminalId"`
	Command    *string               `json:"command,omitempty"`
	Cwd        *string               `json:"cwd,omitempty"`
	Output     *V2TerminalOutput     `json:"output,omitempty"`
	ExitStatus *V2TerminalExitStatus `json:"exitStatus,omitempty"`
	Meta       Meta                  `json:"_meta,omitempty"`
}

// V2TerminalOutputChunk appends output (base64) to a display terminal.
type V2TerminalOutputChunk struct {
	TerminalID string `json:"terminalId"`
	Data       []byte `json:"data"`
}

// V2PlanUpdate replaces one plan, by id.
type V2PlanUpdate struct {
	Plan V2Plan `json:"plan"`
}

// V2Plan is a plan of type "items".
type V2Plan struct {
	Type    string      `json:"type"`
	PlanID  string      `json:"planId"`
	Entries []PlanEntry `json:"entries"`
}

// V2AvailableCommand is a slash command (type "command").
type V2AvailableCommand struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Input       *V2CommandInput `json:"input,omitempty"`
}

// V2CommandInput is a command's free-text input (type "text").
type V2CommandInput struct {
	Type string `json:"type"`
	Hint string `json:"hint"`
}

type V2AvailableCommandsUpdate struct {
	AvailableCommands []V2AvailableCommand `json:"availableCommands"`
}

type V2ConfigOptionUpdate struct {
	ConfigOptions []V2ConfigOption `json:"configOptions"`
}

func (V2StateUpdate) UpdateKind() string             { return "state_update" }
func (V2UserMessage) UpdateKind() string             { return "user_message" }
func (V2HistoryTruncated) UpdateKind() string        { return "history_truncated" }
func (V2ToolCallUpdate) UpdateKind() string          { return "tool_call_update" }
func (V2ToolCallContentChunk) UpdateKind() string    { return "tool_call_content_chunk" }
func (V2TerminalUpdate) UpdateKind() string          { return "terminal_update" }
func (V2TerminalOutputChunk) UpdateKind() string     { return "terminal_output_chunk" }
func (V2PlanUpdate) UpdateKind() string              { return "plan_update" }
func (V2AvailableCommandsUpdate) UpdateKind() string { return "available_commands_update" }
func (V2ConfigOptionUpdate) UpdateKind() string      { return "config_option_update" }

// ---- permission ----

// V2RequestPermissionRequest asks the user about a subject: in this agent
// always a tool call (the card as the client shows it).
type V2RequestPermissionRequest struct {
	SessionID string               `json:"sessionId"`
	Title     string               `json:"title"`
	Subject   *V2PermissionSubject `json:"subject,omitempty"`
	Options   []PermissionOption   `json:"options"`
	Meta      Meta                 `json:"_meta,omitempty"`
}

// V2PermissionSubject is {type: "tool_call", toolCall}.
type V2PermissionSubject struct {
	Type     string           `json:"type"`
	ToolCall V2ToolCallUpdate `json:"toolCall"`
}

// V2Client is what a v2 session calls on the client beyond session/update:
// the permission request in v2's shape. Conn implements it.
type V2Client interface {
	RequestPermissionV2(ctx context.Context, req *V2RequestPermissionRequest) (*RequestPermissionResponse, error)
}
