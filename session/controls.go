package session

// Event types of the session controls: modes, model choice, commands, the
// plan, the title and token usage.
const (
	TypeControls     = "controls"          // Controls: the permission mode or the model changed
	TypeCommands     = "commands"          // Commands; transient, re-sent after new and load
	TypePlan         = "plan"              // Plan: the whole plan, replaced each time
	TypeTitle        = "title"             // Title
	TypeUsage        = "usage"             // Usage: after each model call
	TypeContextReset = "context/reset"     // ContextReset: /clear or /compact replaced the model's context
	TypeGrant        = "permission/always" // Grant: an "always" answer the session remembers
	TypeArchive      = "session/archive"   // Archive: the user archived or unarchived the session
)

// Choice is one value of a select control.
type Choice struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Controls is the complete state of the session's selectable settings, so
// that one event is enough to redraw them (live and on replay).
type Controls struct {
	Mode   string   `json:"mode"`
	Modes  []Choice `json:"modes"`
	Model  string   `json:"model,omitempty"`
	Models []Choice `json:"models,omitempty"`
	// Tools is the tools mode (native, code, both) among ToolsModes.
	Tools      string   `json:"tools,omitempty"`
	ToolsModes []Choice `json:"toolsModes,omitempty"`
	// Effort is the reasoning effort among Efforts, offered when the model
	// takes one (the thought_level option).
	Effort  string   `json:"effort,omitempty"`
	Efforts []Choice `json:"efforts,omitempty"`
	// Sandbox is the sandbox mode for the commands the agent runs
	// (workspace-write, read-only, off) among Sandboxes; none when the
	// agent offers no sandbox choice. A log from before it has none: the
	// agent's default holds.
	Sandbox   string   `json:"sandbox,omitempty"`
	Sandboxes []Choice `json:"sandboxes,omitempty"`
	// Switches are the on/off settings (boolean config options, shown
	// only to clients that take them). A log from before them has none:
	// each keeps its default.
	Switches []Switch `json:"switches,omitempty"`
	// Initial marks the controls a session was created with: the editor
	// had them in the session/new response, so neither live nor a replay
	// sends an update for them.
	Initial bool `json:"initial,omitempty"`
}

// Switch is one on/off setting and its value.
type Switch struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	On          bool   `json:"on"`
}

// Command is one slash command the session offers.
type Command struct {
	Name        string `json:"name"` // without the slash
	Description string `json:"description"`
	Hint        string `json:"hint,omitempty"` // placeholder for the argument, if it takes one
}

// Commands is the full command catalog.
type Commands struct {
	Commands []Command `json:"commands"`
}

// PlanEntry is one item of the plan (todo_write).
type PlanEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`             // pending | in_progress | completed
	Priority string `json:"priority,omitempty"` // high | medium | low; default medium
}

// Plan is the whole plan.
type Plan struct {
	Entries []PlanEntry `json:"entries"`
}

// Title names the session.
type Title struct {
	Title     string `json:"title"`
	UpdatedAt string `json:"updatedAt,omitempty"` // RFC 3339
}

// Usage is the session's context size after a model call, and what the
// session has cost so far when prices are configured.
type Usage struct {
	Used         int     `json:"used"` // tokens in the context now
	Size         int     `json:"size"` // the model's context window
	InputTokens  int     `json:"inputTokens,omitempty"`
	OutputTokens int     `json:"outputTokens,omitempty"`
	Cost         float64 `json:"cost,omitempty"` // cumulative
	Currency     string  `json:"currency,omitempty"`
	Estimated    bool    `json:"estimated,omitempty"`
	// Agent is the subagent whose model call this was: its tokens and cost
	// add up in the session's, while Used and Size stay the session's own
	// context (a subagent's context is its own).
	Agent string `json:"agent,omitempty"`
}

// ContextReset records that the model's context was replaced: emptied by
// /clear, or by a summary for /compact. History rebuilt from the log starts
// over here.
type ContextReset struct {
	Reason  string `json:"reason"` // "clear" | "compact"
	Summary string `json:"summary,omitempty"`
}

// Archive records that the user archived the session (session/archive),
// or took it out of the archive (Archived false). An archived session
// stays whole and loadable; session/list leaves it out unless asked.
type Archive struct {
	Archived bool `json:"archived"`
}

// Grant is an "always allow" (Allowed) or "always reject" answer for the
// calls Key stands for (registry.Permission.Key). It is logged so a loaded
// session remembers what the user already decided.
type Grant struct {
	Key     string `json:"key"`
	Allowed bool   `json:"allowed"`
}
