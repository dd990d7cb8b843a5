package mapping

import (
	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
)

// Config option ids: the permission mode (also offered as legacy modes) and
// the model.
const (
	ConfigMode  = "mode"
	ConfigModel = "model"
	ConfigTools = "tools_mode" // native, code, both (Code Mode)
	// ConfigSandbox is the sandbox mode of the commands the agent runs.
	ConfigSandbox = "sandbox"
	// ConfigEffort is the reasoning effort (category thought_level), for a
	// model that takes one.
	ConfigEffort = "reasoning_effort"
	// Boolean options (only for clients with session.configOptions.boolean).
	ConfigAutoCompact  = "auto_compact"  // compact by itself near the context window
	ConfigShowThoughts = "show_thoughts" // send the model's reasoning to the editor
)

// controls translates the session-control events.
func (t *Translator) controls(p session.Payload) []acp.Update {
	switch c := p.(type) {
	case session.Controls:
		for _, sw := range c.Switches {
			if sw.ID == ConfigShowThoughts {
				t.hideThoughts = !sw.On
			}
		}
		if c.Initial {
			t.mode = c.Mode
			return nil
		}
		// Both views, so clients reading either stay in sync: the legacy
		// mode when it changed, and always the complete option list.
		var out []acp.Update
		if c.Mode != t.mode {
			t.mode = c.Mode
			out = append(out, acp.CurrentModeUpdate{CurrentModeID: c.Mode})
		}
		return append(out, acp.ConfigOptionUpdate{ConfigOptions: ConfigOptions(c, t.o.BooleanOptions)})
	case session.Commands:
		cmds := make([]acp.AvailableCommand, 0, len(c.Commands))
		for _, cmd := range c.Commands {
			ac := acp.AvailableCommand{Name: cmd.Name, Description: cmd.Description}
			if cmd.Hint != "" {
				ac.Input = &acp.CommandInput{Hint: cmd.Hint}
			}
			cmds = append(cmds, ac)
		}
		return []acp.Update{acp.AvailableCommandsUpdate{AvailableCommands: cmds}}
	case session.Plan:
		entries := make([]acp.PlanEntry, 0, len(c.Entries))
		for _, e := range c.Entries {
			prio := e.Priority
			if prio != "high" && prio != "low" {
				prio = "medium"
			}
			entries = append(entries, acp.PlanEntry{Content: e.Content, Priority: prio, Status: planStatus(e.Status)})
		}
		return []acp.Update{acp.Plan{Entries: entries}}
	case session.Title:
		if c.Title == "" {
			return nil
		}
		u := acp.SessionInfoUpdate{Title: &c.Title}
		if c.UpdatedAt != "" {
			u.UpdatedAt = &c.UpdatedAt
		}
		return []acp.Update{u}
	case session.Usage:
		u := acp.UsageUpdate{Used: uint64(max(c.Used, 0)), Size: uint64(max(c.Size, 0))}
		if c.Currency != "" {
			u.Cost = &acp.Cost{Amount: c.Cost, Currency: c.Currency}
		}
		return []acp.Update{u}
	}
	return nil
}

func planStatus(s string) string {
	switch s {
	case "in_progress", "completed":
		return s
	}
	return "pending"
}

// ConfigOptions is the complete option list for a controls state: the
// permission mode (category mode) and, when there is a choice, the model
// (category model); with booleans (the client advertised
// session.configOptions.boolean) the switches too, and never without. The
// agent answers session/new, load and set_config_option with it.
func ConfigOptions(c session.Controls, booleans bool) []acp.ConfigOption {
	out := []acp.ConfigOption{{
		ID: ConfigMode, Name: "Permission mode", Category: "mode", Type: "select",
		Description:  "What tool calls may do without asking",
		CurrentValue: c.Mode, Options: selectOptions(c.Modes),
	}}
	if len(c.Models) > 0 {
		out = append(out, acp.ConfigOption{
			ID: ConfigModel, Name: "Model", Category: "model", Type: "select",
			CurrentValue: c.Model, Options: selectOptions(c.Models),
		})
	}
	if len(c.Efforts) > 0 {
		out = append(out, acp.ConfigOption{
			ID: ConfigEffort, Name: "Reasoning effort", Category: acp.CategoryThoughtLevel, Type: acp.ConfigSelect,
			Description:  "How long the model thinks before it answers",
			CurrentValue: c.Effort, Options: selectOptions(c.Efforts),
		})
	}
	if len(c.ToolsModes) > 0 {
		out = append(out, acp.ConfigOption{
			ID: ConfigTools, Name: "Tools", Category: "_tools", Type: "select",
			Description:  "How the model calls tools: each directly, through run_code TypeScript programs, or both",
			CurrentValue: c.Tools, Options: selectOptions(c.ToolsModes),
		})
	}
	if len(c.Sandboxes) > 0 {
		out = append(out, acp.ConfigOption{
			ID: ConfigSandbox, Name: "Sandbox", Category: "_sandbox", Type: "select",
			Description:  "How the kernel confines the commands the agent runs (bash, jobs, hooks, MCP servers)",
			CurrentValue: c.Sandbox, Options: selectOptions(c.Sandboxes),
		})
	}
	if booleans {
		for _, sw := range c.Switches {
			out = append(out, acp.ConfigOption{ID: sw.ID, Name: sw.Name, Description: sw.Description,
				Type: acp.ConfigBoolean, CurrentValue: sw.On})
		}
	}
	return out
}

// ModeState is the legacy modes view of the permission mode.
func ModeState(c session.Controls) *acp.SessionModeState {
	st := &acp.SessionModeState{CurrentModeID: c.Mode, AvailableModes: make([]acp.SessionMode, 0, len(c.Modes))}
	for _, m := range c.Modes {
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{ID: m.ID, Name: m.Name, Description: m.Description})
	}
	return st
}

func selectOptions(cs []session.Choice) []acp.ConfigSelectOption {
	out := make([]acp.ConfigSelectOption, 0, len(cs))
	for _, c := range cs {
		out = append(out, acp.ConfigSelectOption{Value: c.ID, Name: c.Name, Description: c.Description})
	}
	return out
}
