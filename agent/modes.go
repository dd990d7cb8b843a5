package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/codemode"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/model/catalog"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/sandbox"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/sysprompt"
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

// ModelChoice is one model the user may pick for a session; the model
// catalog (model/catalog) owns it, with its price and the cost of a call.
type ModelChoice = catalog.Choice

// Price is what a model costs, per million tokens (catalog.Price).
type Price = catalog.Price

// defaultControls are a new session's mode, model and tools mode, from the
// agent's options.
func (a *Agent) defaultControls() ctlState {
	c := ctlState{mode: a.o.PermissionMode, tools: a.o.ToolsMode}
	if !ValidMode(c.mode) {
		c.mode = ModeAsk
	}
	if c.tools == "" {
		c.tools = codemode.ModeNative
	}
	c.model = a.models.Default(a.o.DefaultModel)
	if a.o.Sandbox != nil {
		c.sandbox = a.o.Sandbox.Mode
		if c.sandbox == "" {
			c.sandbox = sandbox.WorkspaceWrite
		}
	}
	return c
}

// controls are one session's selectable settings: the permission mode, the
// model, the tools mode and the reasoning effort, what the pickers offer,
// and the changes from session/set_config_option, session/set_mode and the
// slash commands. It owns no state: it reads the folded state and changes
// it only by logging a Controls event, which apply folds (state.go), so a
// loaded or resumed session has the controls it had.
type controls struct {
	a *Agent
	// read is the folded state's controls.
	read func() ctlState
	// emit logs one event of the session.
	emit func(ctx context.Context, ev session.Event)
	// booleans: the client takes boolean config options, so the
	// switches are among the options it is shown.
	booleans bool
}

// Controls returns what session/new, load and resume answer with: the
// legacy modes and the complete config option list.
func (c *controls) Controls() (*acp.SessionModeState, []acp.ConfigOption) {
	st := c.state()
	return mapping.ModeState(st), mapping.ConfigOptions(st, c.booleans)
}

// state is the complete state the mapping renders.
func (c *controls) state() session.Controls { return c.of(c.read()) }

// of is the event that records ctl, with the choices offered.
func (c *controls) of(ctl ctlState) session.Controls {
	a := c.a
	ev := session.Controls{Mode: ctl.mode, Modes: c.offeredModes(ctl.mode), Model: ctl.model,
		Tools: string(ctl.tools), ToolsModes: toolsModeChoices, Effort: ctl.effort,
		Switches: []session.Switch{
			{ID: mapping.ConfigAutoCompact, Name: "Automatic compaction", On: !ctl.manualCompact,
				Description: "Summarise older turns when the conversation nears the model's context window (off: only /compact, or when the endpoint refuses a request as too long)"},
			{ID: mapping.ConfigShowThoughts, Name: "Show thinking", On: !ctl.hideThoughts,
				Description: "Show the model's reasoning in the thread (it is kept either way)"},
		}}
	if a.o.Sandbox != nil {
		ev.Sandbox, ev.Sandboxes = string(ctl.sandbox), a.o.Sandbox.choices()
	}
	for _, m := range a.models.Models() {
		ev.Models = append(ev.Models, session.Choice{ID: m.ID, Name: m.Name, Description: m.Description})
	}
	// The effort is offered for the model that takes one; the choice is kept
	// (and logged) across a switch to a model that takes none.
	if m := a.models.Find(ctl.model); m != nil && len(m.ReasoningEfforts) > 0 {
		for _, e := range m.ReasoningEfforts {
			ev.Efforts = append(ev.Efforts, session.Choice{ID: e, Name: effortName(e)})
		}
		if !slices.Contains(m.ReasoningEfforts, ev.Effort) {
			ev.Effort = defaultEffort(m.ReasoningEfforts)
		}
	}
	return ev
}

func (c *controls) mode() string { return c.read().mode }

// model is the session's model, or nil when none is configured.
func (c *controls) model() *ModelChoice { return c.a.models.Find(c.read().model) }

// provider is the provider the next model request goes to.
func (c *controls) provider() model.Provider {
	if m := c.model(); m != nil {
		return m.Provider
	}
	return nil
}

// setControl changes the mode, the model or the tools mode by logging the
// new state, which the mapping sends as current_mode_update and
// config_option_update. A change lands between two tool calls of a turn at
// the earliest: the gate reads the mode at each call.
func (c *controls) set(ctx context.Context, id, value string) error {
	ctl := c.read()
	switch id {
	case mapping.ConfigMode:
		if !ValidMode(value) {
			return acp.InvalidParams("invalid params: unknown mode %q (use %s)", value, modeIDs())
		}
		ctl.mode = value
	case mapping.ConfigModel:
		if c.a.models.Find(value) == nil {
			return acp.InvalidParams("invalid params: unknown model %q (use %s)", value, c.modelIDs())
		}
		ctl.model = value
	case mapping.ConfigEffort:
		m := c.model()
		if m == nil || !slices.Contains(m.ReasoningEfforts, value) {
			return acp.InvalidParams("invalid params: %s: the model takes no reasoning effort %q", mapping.ConfigEffort, value)
		}
		ctl.effort = value
	case mapping.ConfigSandbox:
		m, err := sandbox.ParseMode(value)
		if err != nil || c.a.o.Sandbox == nil {
			return acp.InvalidParams("invalid params: %s: unknown value %q (want workspace-write, read-only or off)", mapping.ConfigSandbox, value)
		}
		ctl.sandbox = m
	case mapping.ConfigTools:
		m, err := codemode.ParseMode(value)
		if err != nil || value == "" {
			return acp.InvalidParams("invalid params: %s: unknown value %q (want native, code or both)", mapping.ConfigTools, value)
		}
		ctl.tools = m
	default:
		return acp.InvalidParams("invalid params: unknown config option %q (this agent has %q, %q, %q and, for models that take one, %q)",
			id, mapping.ConfigMode, mapping.ConfigModel, mapping.ConfigTools, mapping.ConfigEffort)
	}
	c.emit(ctx, session.New(c.of(ctl)))
	return nil
}

// setSwitch turns an on/off setting (a boolean config option) on or off,
// by logging the new state like set.
func (c *controls) setSwitch(ctx context.Context, id string, on bool) error {
	ctl := c.read()
	switch id {
	case mapping.ConfigAutoCompact:
		ctl.manualCompact = !on
	case mapping.ConfigShowThoughts:
		ctl.hideThoughts = !on
	default:
		return acp.InvalidParams("invalid params: %q is not a boolean option (this agent has %q and %q)",
			id, mapping.ConfigAutoCompact, mapping.ConfigShowThoughts)
	}
	c.emit(ctx, session.New(c.of(ctl)))
	return nil
}

// isSwitch reports whether id names an on/off setting.
func isSwitch(id string) bool {
	return id == mapping.ConfigAutoCompact || id == mapping.ConfigShowThoughts
}

// offeredModes are the permission modes the picker offers: bypass only
// when the user opted in (Options.OfferBypass), or while it is the current
// mode (a picker must hold its current value).
func (c *controls) offeredModes(current string) []session.Choice {
	if c.a.o.OfferBypass || current == ModeBypass {
		return PermissionModes
	}
	return slices.DeleteFunc(slices.Clone(PermissionModes), func(c session.Choice) bool { return c.ID == ModeBypass })
}

func modeIDs() string {
	var ids []string
	for _, m := range PermissionModes {
		ids = append(ids, m.ID)
	}
	return strings.Join(ids, ", ")
}

// choices are the models a session may pick.
func (c *controls) choices() []ModelChoice { return c.a.models.Models() }

func (c *controls) modelIDs() string {
	var ids []string
	for _, m := range c.choices() {
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
	if err := s.ctl.fromPicker(mapping.ConfigMode, req.ModeID); err != nil {
		return nil, err
	}
	if err := s.ctl.set(ctx, mapping.ConfigMode, req.ModeID); err != nil {
		return nil, err
	}
	return &acp.EmptyResponse{}, nil
}

// SetSessionConfigOption sets the mode, the model, the tools mode, the
// effort or a switch (a boolean value), and answers with the complete
// option list as this client is shown it.
func (a *Agent) SetSessionConfigOption(ctx context.Context, req *acp.SetConfigOptionRequest) (*acp.SetConfigOptionResponse, error) {
	s, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	if req.Type == acp.ConfigBoolean || isSwitch(req.ConfigID) {
		var on bool
		if err := json.Unmarshal(req.Value, &on); err != nil {
			return nil, acp.InvalidParams("invalid params: %q takes a boolean value (type \"boolean\")", req.ConfigID)
		}
		if err := s.ctl.setSwitch(ctx, req.ConfigID, on); err != nil {
			return nil, err
		}
		return &acp.SetConfigOptionResponse{ConfigOptions: mapping.ConfigOptions(s.ctl.state(), s.ctl.booleans)}, nil
	}
	var value string
	if err := json.Unmarshal(req.Value, &value); err != nil {
		return nil, acp.InvalidParams("invalid params: %q takes a string value", req.ConfigID)
	}
	if err := s.ctl.fromPicker(req.ConfigID, value); err != nil {
		return nil, err
	}
	if err := s.ctl.set(ctx, req.ConfigID, value); err != nil {
		return nil, err
	}
	return &acp.SetConfigOptionResponse{ConfigOptions: mapping.ConfigOptions(s.ctl.state(), s.ctl.booleans)}, nil
}

// SetSessionModel serves session/set_model, which the schema no longer has
// and some clients still call (the AI SDK provider): it is the model config
// option, set the same way and answered the same way (the whole option
// list, where the old method answered {}; a client reading neither loses
// nothing).
func (a *Agent) SetSessionModel(ctx context.Context, req *acp.SetModelRequest) (*acp.SetConfigOptionResponse, error) {
	value, _ := json.Marshal(req.ModelID)
	return a.SetSessionConfigOption(ctx, &acp.SetConfigOptionRequest{SessionID: req.SessionID, ConfigID: mapping.ConfigModel, Value: value})
}

// fromPicker refuses a mode the picker does not offer. Zed re-applies the
// value last picked to every new session, so a bypass picked while it was
// the current mode would otherwise come back unasked.
func (c *controls) fromPicker(id, value string) error {
	if id != mapping.ConfigMode || value != ModeBypass {
		return nil
	}
	if !slices.ContainsFunc(c.offeredModes(c.mode()), func(m session.Choice) bool { return m.ID == value }) {
		return acp.InvalidParams("invalid params: mode %q is not offered in the picker; use /mode bypass, or start acp-bridge with --offer-bypass", value)
	}
	return nil
}

var (
	_ acp.ModeSetter         = (*Agent)(nil)
	_ acp.ConfigOptionSetter = (*Agent)(nil)
)

// modeGate applies the permission mode, read at the moment of the call, to
// what the tool declares it is (registry.Facts). In plan mode it denies
// whatever is not read-only; otherwise it decides whether the tool's own
// approval request (permissions.gate) is put to the user.
func modeGate(ctl *controls, perm *permissions) pipeline.Gate {
	return func(ctx context.Context, d *registry.Def, c *registry.Call) pipeline.Decision {
		return gateByMode(ctx, ctl.mode(), perm, d, c)
	}
}

func gateByMode(ctx context.Context, mode string, perm *permissions, d *registry.Def, c *registry.Call) pipeline.Decision {
	switch mode {
	case ModePlan:
		if !d.Facts.ReadOnly {
			return pipeline.Decision{Kind: pipeline.Deny, Reason: fmt.Sprintf(
				"tool %q was not run: the session is in plan mode, where only read-only tools run. "+
					"Finish the plan (todo_write) and ask the user to switch modes to carry it out", d.Name)}
		}
	case ModeBypass:
		return pipeline.Decision{Kind: pipeline.Allow}
	case ModeAcceptEdits:
		if d.Facts.Edits {
			return pipeline.Decision{Kind: pipeline.Allow}
		}
	}
	return perm.gate(ctx, d, c)
}

// reasoningEffort is what the next request asks of a model that takes a
// reasoning effort ("" for one that takes none).
func (c *controls) reasoningEffort() string {
	m := c.model()
	if m == nil || len(m.ReasoningEfforts) == 0 {
		return ""
	}
	if e := c.read().effort; slices.Contains(m.ReasoningEfforts, e) {
		return e
	}
	return defaultEffort(m.ReasoningEfforts)
}

// defaultEffort is the middle of the efforts a model takes ("medium" of
// low, medium, high): OpenAI's own default.
func defaultEffort(es []string) string { return es[len(es)/2] }

func effortName(e string) string {
	if e == "" {
		return e
	}
	return strings.ToUpper(e[:1]) + e[1:]
}

// modePrompt tells the model about a mode that changes what it may do.
func (c *controls) modePrompt() string {
	if c.mode() == ModePlan {
		return sysprompt.PlanMode
	}
	return ""
}
