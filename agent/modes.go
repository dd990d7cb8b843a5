package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// Permission modes: what tool calls may do without asking.
const (
	ModeAsk         = "ask"          // tools that want approval ask (bash, writes)
	ModeAcceptEdits = "accept-edits" // file edits run without asking; the rest as in ask
	ModePlan        = "plan"         // read-only tools only; everything else is denied
	ModeBypass      = "bypass"       // nothing asks
)

// PermissionModes lists the modes in the order the editor offers them.
var PermissionModes = []session.Choice{
	{ID: ModeAsk, Name: "Ask", Description: "Commands and file changes ask for approval"},
	{ID: ModeAcceptEdits, Name: "Accept edits", Description: "File edits run without asking; commands still ask"},
	{ID: ModePlan, Name: "Plan", Description: "Read-only: the agent may look and plan, but not change anything"},
	{ID: ModeBypass, Name: "Bypass permissions", Description: "Nothing asks; every tool call runs"},
}

// ValidMode reports whether id names a permission mode.
func ValidMode(id string) bool {
	return slices.ContainsFunc(PermissionModes, func(c session.Choice) bool { return c.ID == id })
}

// ModelChoice is one model the user may pick for a session.
type ModelChoice struct {
	ID          string // unique, e.g. "deepseek/deepseek-chat"
	Name        string // shown in the picker
	Description string
	Provider    model.Provider
	// ContextWindow is the usage_update size, in tokens (0: unknown, 128000 assumed).
	ContextWindow int
	Images        bool   // the model accepts image input
	Price         *Price // nil: no cost is reported
}

// Price is what a model costs, per million tokens.
type Price struct {
	Input       float64 // uncached input
	CachedInput float64 // input served from the prompt cache (0: same as Input)
	Output      float64
	Currency    string // e.g. "USD"
}

const defaultContextWindow = 128000

// controls is a session's selectable state. It has its own lock: the
// pipeline's gate reads it while a turn runs, and set_mode may land mid-turn
// (the change takes effect on the next tool call).
type controls struct {
	mu    sync.Mutex
	mode  string
	model string // a ModelChoice ID; "" when the agent has no models

	// usage.go and commands.go
	title      string
	cost       float64
	images     []model.Image // of the prompt being run
	titleAsked bool
}

// models returns the agent's model choices; a lone Options.Model becomes one.
func (a *Agent) models() []ModelChoice {
	if len(a.o.Models) > 0 {
		if a.o.MoreModels != nil {
			if more := a.o.MoreModels(); len(more) > 0 {
				return append(slices.Clip(a.o.Models), more...)
			}
		}
		return a.o.Models
	}
	if a.o.Model != nil {
		name := a.o.ModelName
		if name == "" {
			name = "default"
		}
		return []ModelChoice{{ID: name, Name: name, Provider: a.o.Model}}
	}
	return nil
}

func (a *Agent) modelChoice(id string) *ModelChoice {
	ms := a.models()
	for i := range ms {
		if ms[i].ID == id {
			return &ms[i]
		}
	}
	return nil
}

// defaultModelImages: images are advertised only when a new session's
// model accepts them.
func (a *Agent) defaultModelImages() bool {
	ms := a.models()
	if len(ms) == 0 {
		return false
	}
	if m := a.modelChoice(a.o.DefaultModel); m != nil {
		return m.Images
	}
	return ms[0].Images
}

// initControls sets a new session's mode and model from the agent's defaults.
func (s *Session) initControls() {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	s.ctl.mode = s.a.o.PermissionMode
	if !ValidMode(s.ctl.mode) {
		s.ctl.mode = ModeAsk
	}
	ms := s.a.models()
	if len(ms) > 0 {
		s.ctl.model = ms[0].ID
		if s.a.modelChoice(s.a.o.DefaultModel) != nil {
			s.ctl.model = s.a.o.DefaultModel
		}
	}
}

// Controls returns what session/new, load and resume answer with: the
// legacy modes and the complete config option list.
func (s *Session) Controls() (*acp.SessionModeState, []acp.ConfigOption) {
	st := s.controlsState()
	return mapping.ModeState(st), mapping.ConfigOptions(st)
}

// RestoreControls re-applies what a replayed log says about the controls:
// the last mode and model (when still offered), the title and the running
// cost. session/load calls it with the stored events before replaying them.
func (s *Session) RestoreControls(events []session.Event) {
	for _, ev := range events {
		switch ev.Type {
		case session.TypeControls:
			c, err := session.Decode[session.Controls](ev)
			if err != nil {
				continue
			}
			s.ctl.mu.Lock()
			if ValidMode(c.Mode) {
				s.ctl.mode = c.Mode
			}
			if s.a.modelChoice(c.Model) != nil {
				s.ctl.model = c.Model
			}
			s.ctl.mu.Unlock()
			if c.Tools != "" {
				raw, _ := json.Marshal(c.Tools)
				_ = s.SetToolsMode(raw) // a mode this build does not know keeps the default
			}
		case session.TypeTitle:
			if t, err := session.Decode[session.Title](ev); err == nil && t.Title != "" {
				s.ctl.mu.Lock()
				s.ctl.title, s.ctl.titleAsked = t.Title, true
				s.ctl.mu.Unlock()
			}
		case session.TypeUsage:
			if u, err := session.Decode[session.Usage](ev); err == nil && u.Currency != "" {
				s.ctl.mu.Lock()
				s.ctl.cost = u.Cost
				s.ctl.mu.Unlock()
			}
		}
	}
}

// controlsState is the complete state the mapping renders.
func (s *Session) controlsState() session.Controls {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	c := session.Controls{Mode: s.ctl.mode, Modes: PermissionModes, Model: s.ctl.model}
	for _, m := range s.a.models() {
		c.Models = append(c.Models, session.Choice{ID: m.ID, Name: m.Name, Description: m.Description})
	}
	if s.code != nil {
		c.Tools, c.ToolsModes = string(s.code.get()), toolsModeChoices
	}
	return c
}

func (s *Session) mode() string {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	return s.ctl.mode
}

// currentModel is the session's model, or nil when none is configured.
func (s *Session) currentModel() *ModelChoice {
	s.ctl.mu.Lock()
	id := s.ctl.model
	s.ctl.mu.Unlock()
	return s.a.modelChoice(id)
}

// provider is the provider the next model request goes to.
func (s *Session) provider() model.Provider {
	if m := s.currentModel(); m != nil {
		return m.Provider
	}
	return nil
}

// setControl changes the mode or the model and logs the new state, which
// the mapping sends as current_mode_update and config_option_update.
func (s *Session) setControl(ctx context.Context, id, value string) error {
	s.ctl.mu.Lock()
	switch id {
	case mapping.ConfigMode:
		if !ValidMode(value) {
			s.ctl.mu.Unlock()
			return acp.InvalidParams("invalid params: unknown mode %q (use %s)", value, modeIDs())
		}
		s.ctl.mode = value
	case mapping.ConfigModel:
		if s.a.modelChoice(value) == nil {
			s.ctl.mu.Unlock()
			return acp.InvalidParams("invalid params: unknown model %q (use %s)", value, s.a.modelIDs())
		}
		s.ctl.model = value
	case mapping.ConfigTools:
		s.ctl.mu.Unlock()
		raw, _ := json.Marshal(value)
		if err := s.SetToolsMode(raw); err != nil {
			return err
		}
		s.ctl.mu.Lock()
	default:
		s.ctl.mu.Unlock()
		return acp.InvalidParams("invalid params: unknown config option %q (this agent has %q, %q and %q)", id, mapping.ConfigMode, mapping.ConfigModel, mapping.ConfigTools)
	}
	s.ctl.mu.Unlock()
	s.emit(ctx, session.New(session.TypeControls, s.controlsState()))
	return nil
}

func modeIDs() string {
	var ids []string
	for _, m := range PermissionModes {
		ids = append(ids, m.ID)
	}
	return strings.Join(ids, ", ")
}

func (a *Agent) modelIDs() string {
	var ids []string
	for _, m := range a.models() {
		ids = append(ids, m.ID)
	}
	if len(ids) == 0 {
		return "(no models are configured)"
	}
	return strings.Join(ids, ", ")
}

// SetSessionMode switches the permission mode (legacy modes API).
func (a *Agent) SetSessionMode(ctx context.Context, req *acp.SetModeRequest) (*acp.EmptyResponse, error) {
	s, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	if err := s.setControl(ctx, mapping.ConfigMode, req.ModeID); err != nil {
		return nil, err
	}
	return &acp.EmptyResponse{}, nil
}

// SetSessionConfigOption sets the mode or the model and answers with the
// complete option list.
func (a *Agent) SetSessionConfigOption(ctx context.Context, req *acp.SetConfigOptionRequest) (*acp.SetConfigOptionResponse, error) {
	s, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	var value string
	if err := json.Unmarshal(req.Value, &value); err != nil {
		return nil, acp.InvalidParams("invalid params: %q takes a string value", req.ConfigID)
	}
	if err := s.setControl(ctx, req.ConfigID, value); err != nil {
		return nil, err
	}
	return &acp.SetConfigOptionResponse{ConfigOptions: mapping.ConfigOptions(s.controlsState())}, nil
}

var (
	_ acp.ModeSetter         = (*Agent)(nil)
	_ acp.ConfigOptionSetter = (*Agent)(nil)
)

// ReadOnly reports whether a call only looks: its tool presents it as a
// read, search, fetch or think card. Anything else (edits, commands, tools
// without a presenter) may change something.
func ReadOnly(d *registry.Def, args json.RawMessage) bool {
	switch k := viewKind(d, args); k {
	case acp.KindRead, acp.KindSearch, acp.KindFetch, acp.KindThink:
		return true
	}
	return false
}

// isEdit reports whether a call changes files, as accept-edits understands it.
func isEdit(d *registry.Def, args json.RawMessage) bool {
	switch viewKind(d, args) {
	case acp.KindEdit, acp.KindDelete, acp.KindMove:
		return true
	}
	return false
}

func viewKind(d *registry.Def, args json.RawMessage) acp.ToolKind {
	switch v := d.PresentCall(args).(type) {
	case registry.DiffCard:
		return acp.KindEdit
	case registry.TerminalCard:
		return acp.KindExecute
	case registry.GenericCard:
		return acp.ToolKind(v.Kind)
	}
	return acp.KindOther
}

// modeGate applies the permission mode, read at the moment of the call. In
// plan mode it denies whatever is not read-only; otherwise it decides
// whether the tool's own approval request (permissionGate) is put to the user.
func (s *Session) modeGate(ctx context.Context, d *registry.Def, c *registry.Call) pipeline.Decision {
	switch s.mode() {
	case ModePlan:
		if !ReadOnly(d, c.Args) {
			return pipeline.Decision{Kind: pipeline.Deny, Reason: fmt.Sprintf(
				"tool %q was not run: the session is in plan mode, where only read-only tools run. "+
					"Finish the plan (todo_write) and ask the user to switch modes to carry it out", d.Name)}
		}
	case ModeBypass:
		return pipeline.Decision{Kind: pipeline.Allow}
	case ModeAcceptEdits:
		if isEdit(d, c.Args) {
			return pipeline.Decision{Kind: pipeline.Allow}
		}
	}
	return s.permissionGate(ctx, d, c)
}

// modePrompt tells the model about a mode that changes what it may do.
func (s *Session) modePrompt() string {
	if s.mode() == ModePlan {
		return " The session is in plan mode: only read-only tools run. Investigate, then lay out the plan with todo_write; do not try to change files or run commands."
	}
	return ""
}
