package mapping

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// toolCall opens a card. A tool without a call presenter, a presenter that
// panics or returns nothing, or a tool no longer registered (an old log)
// gets the generic card titled with the tool's name.
func (t *Translator) toolCall(ev session.ToolCall) []acp.Update {
	c := &call{name: ev.Name, args: ev.Args, agent: ev.Agent}
	if t.tools != nil {
		c.def = t.tools.Get(ev.Name)
	}
	c.in = c.def.Reuse(ev.Input, ev.Args)
	c.view = c.in.PresentPreview(ev.Preview) // what it would do, from the files as they were
	if c.view == nil {
		c.view = c.in.PresentCall() // nil-safe and panic-safe
	}
	if c.view == nil {
		c.view = registry.GenericCard{Title: ev.Name, Kind: string(acp.KindOther)}
	}
	t.calls[ev.CallID] = c
	if _, ok := c.view.(registry.NoCard); ok {
		return nil // shown elsewhere; a failure gets its card (toolResult)
	}

	tc := acp.ToolCall{ToolCallID: ev.CallID, Name: ev.Name, Status: acp.StatusPending, RawInput: rawJSON(ev.Args)}
	switch v := c.view.(type) {
	case registry.TerminalCard:
		tc.Title, tc.Kind = orName(v.Command, ev.Name), acp.KindExecute
		tc.Content = t.terminalCallContent(ev.CallID, v)
		if t.o.TerminalOutput {
			tc.Meta = acp.Meta{"terminal_info": map[string]any{"terminal_id": ev.CallID, "cwd": t.abs(v.Cwd)}}
		}
	case registry.DiffCard:
		tc.Kind = acp.KindEdit
		tc.Title, tc.Locations = t.titleAndLocations(orName(v.Title, ev.Name), v.Locations, v.Diffs)
		tc.Content = t.diffs(v.Diffs)
	case registry.GenericCard:
		tc.Kind = kind(v.Kind)
		tc.Title, tc.Locations = t.titleAndLocations(orName(v.Title, ev.Name), capLocations(tc.Kind, v.Locations), nil)
		tc.Content = textItems(v.Content)
	}
	tc.Title = c.titled(tc.Title)
	tc.Meta = withParent(tc.Meta, ev.Parent, ev.Agent)
	return []acp.Update{tc}
}

// PermissionToolCall is the toolCall of a session/request_permission for a
// card already shown: its title (for a command, the exact command line; for
// a file, the path), kind and rawInput, and for an edit the diff it would
// apply. A terminal card sends no content, because an update's content
// replaces the card's and the terminal block would be lost. ok is false
// for an id without a card.
func (t *Translator) PermissionToolCall(callID string) (u acp.ToolCallUpdate, ok bool) {
	c := t.calls[callID]
	if c == nil || !c.carded() {
		return acp.ToolCallUpdate{ToolCallID: callID}, false
	}
	u = acp.ToolCallUpdate{ToolCallID: callID, Name: c.name, Status: statusPtr(acp.StatusPending), RawInput: rawJSON(c.args)}
	var title string
	var k acp.ToolKind
	switch v := c.view.(type) {
	case registry.TerminalCard:
		title, k = orName(v.Command, c.name), acp.KindExecute
	case registry.DiffCard:
		k = acp.KindEdit
		title, u.Locations = t.titleAndLocations(orName(v.Title, c.name), v.Locations, v.Diffs)
		u.Content = t.diffs(v.Diffs)
	case registry.GenericCard:
		k = kind(v.Kind)
		title, u.Locations = t.titleAndLocations(orName(v.Title, c.name), capLocations(k, v.Locations), nil)
		u.Content = textItems(v.Content)
		if len(u.Content) == 0 && k == acp.KindOther {
			// A card of kind other (an MCP tool's) says nothing about what
			// the call will do: the arguments are what the user decides on.
			u.Content = argumentsContent(c.args)
		}
	}
	title = c.titled(title)
	u.Title, u.Kind = &title, &k
	return u, true
}

// toolResult closes a card with its final update.
func (t *Translator) toolResult(r session.ToolResult) []acp.Update {
	c := t.calls[r.CallID]
	if c == nil {
		return t.orphanResult(r)
	}
	if c.done {
		// A second result for one call (a late body after the turn already
		// failed the card): the card has its final state.
		return nil
	}
	c.done = true
	if !c.carded() {
		if !r.Result.IsError {
			return nil
		}
		// A call without a card failed: the editor gets the whole card, as
		// for an orphan, since it never saw the call.
		c.in, c.view = nil, registry.GenericCard{}
		return []acp.Update{acp.ToolCall{
			ToolCallID: r.CallID, Name: c.name, Title: c.titled(c.name), Kind: acp.KindOther, Status: acp.StatusFailed,
			RawInput: rawJSON(c.args), Content: textItems(r.Result.Content), RawOutput: rawOutput(r.Result),
		}}
	}
	view := c.in.PresentResult(r.Result) // nil-safe and panic-safe
	c.in = nil
	_, callTerminal := c.view.(registry.TerminalCard)
	if tv, ok := view.(registry.TerminalCard); ok {
		if callTerminal {
			return t.terminalResult(r.CallID, c, tv, r.Result)
		}
		view = nil // orphan guard: terminal output needs a terminal card to land in
	}
	if callTerminal {
		return t.terminalFailure(r.CallID, c, view, r.Result)
	}
	u := acp.ToolCallUpdate{ToolCallID: r.CallID, Name: c.name, Status: statusPtr(resultStatus(r.Result)), RawOutput: rawOutput(r.Result)}
	var content []acp.ToolCallContent
	switch v := view.(type) {
	case registry.DiffCard:
		if content = t.diffs(v.Diffs); len(content) > 0 {
			title, locs := t.titleAndLocations(orName(v.Title, c.name), v.Locations, v.Diffs)
			title = c.titled(title)
			u.Title = &title
			if len(v.Locations) > 0 {
				// Only the result's own locations (the first changed line):
				// the bare paths of its diffs would move the editor's follow
				// position back to the top of the file.
				u.Locations = locs
			}
		}
	case registry.GenericCard:
		content = textItems(v.Content)
		if v.Title != "" {
			title, locs := t.titleAndLocations(v.Title, capLocations(kind(v.Kind), v.Locations), nil)
			if len(v.Locations) == 0 {
				// The path in the title is the call's: relativize it the same way.
				title = t.relTitle(title, firstPath(c.view))
			}
			title = c.titled(title)
			u.Title, u.Locations = &title, locs
		}
	}
	if len(content) == 0 {
		content = textItems(r.Result.Content) // the raw result: a card is never blanked
	}
	if len(content) > 0 {
		u.Content = content
	}
	// With nothing at all to show, content is left out: the call-time
	// content stays, and Zed renders rawOutput where content is empty.
	return []acp.Update{u}
}

// orphanResult shows a result whose call has no card (a late or unknown id).
// A tool_call_update for an id the editor does not know makes Zed insert a
// "Tool call not found" entry, so the card is created whole instead.
func (t *Translator) orphanResult(r session.ToolResult) []acp.Update {
	t.calls[r.CallID] = &call{view: registry.GenericCard{}, done: true}
	return []acp.Update{acp.ToolCall{
		ToolCallID: r.CallID, Title: "Tool result", Kind: acp.KindOther, Status: resultStatus(r.Result),
		Content: textItems(r.Result.Content), RawOutput: rawOutput(r.Result),
	}}
}

func resultStatus(r registry.Result) acp.ToolCallStatus {
	if r.IsError {
		return acp.StatusFailed
	}
	return acp.StatusCompleted
}

func orName(title, name string) string {
	if title == "" {
		return name
	}
	return title
}

// kind is the wire kind of a generic card. execute is kept for terminal
// cards: Zed renders an execute card without a terminal in its content as
// a "Run Command" block that cannot be opened, showing the title as if it
// were a command line, so a generic card of kind execute (run_code) goes
// out as other, which Zed shows with its content.
func kind(k string) acp.ToolKind {
	switch acp.ToolKind(k) {
	case acp.KindRead, acp.KindEdit, acp.KindDelete, acp.KindMove, acp.KindSearch,
		acp.KindThink, acp.KindFetch, acp.KindSwitchMode:
		return acp.ToolKind(k)
	}
	return acp.KindOther
}

// argumentsContent shows a call's arguments as an indented JSON block; none
// for a call without arguments.
func argumentsContent(args json.RawMessage) []acp.ToolCallContent {
	var v any
	if json.Unmarshal(args, &v) != nil {
		if len(args) == 0 {
			return nil
		}
		return []acp.ToolCallContent{acp.ContentItem(acp.TextBlock(codeBlock(string(args), "")))}
	}
	if m, ok := v.(map[string]any); ok && len(m) == 0 || v == nil {
		return nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil
	}
	return []acp.ToolCallContent{acp.ContentItem(acp.TextBlock(codeBlock(string(b), "json")))}
}

// codeBlock fences text with a fence longer than any backtick run in it.
func codeBlock(text, lang string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + fence
}

// textItems maps model-facing content to card content: text and images;
// other block types have no card form and are left out.
func textItems(cs []registry.Content) []acp.ToolCallContent {
	var out []acp.ToolCallContent
	for _, c := range cs {
		switch c.Type {
		case "text":
			out = append(out, acp.ContentItem(acp.TextBlock(c.Text)))
		case "image":
			out = append(out, acp.ContentItem(acp.ContentBlock{Type: "image", Data: c.Data, MimeType: c.MimeType}))
		case "resource":
			r := &acp.EmbeddedResource{URI: c.URI, MimeType: c.MimeType}
			if c.Data != "" {
				blob := c.Data
				r.Blob = &blob
			} else {
				text := c.Text
				r.Text = &text
			}
			out = append(out, acp.ContentItem(acp.ContentBlock{Type: "resource", Resource: r}))
		case "resource_link":
			out = append(out, acp.ContentItem(acp.ContentBlock{Type: "resource_link", URI: c.URI, Name: c.Name, MimeType: c.MimeType}))
		}
	}
	return out
}

func (t *Translator) diffs(ds []registry.FileDiff) []acp.ToolCallContent {
	var out []acp.ToolCallContent
	for _, d := range ds {
		out = append(out, acp.DiffItem(t.abs(d.Path), d.OldText, d.NewText))
	}
	return out
}

// rawOutput is the result as the model read it, bounded (RawOutputLimit),
// in the form of a card's content: a list of one text content item.
// Clients without a card view take rawOutput as the tool's result (the AI
// SDK provider hands it to the app, and for a failed call iterates it as
// content items for the error message), so it carries the text itself, for
// failed calls too, and is always a list.
func rawOutput(r registry.Result) json.RawMessage {
	b, _ := json.Marshal([]acp.ToolCallContent{acp.ContentItem(acp.TextBlock(bound(r.Text(), RawOutputLimit)))})
	return b
}

// RawOutputLimit bounds the text in a final update's rawOutput: with the
// card's own content, one update stays well under what Zed keeps per
// message (its ACP log holds the last 2,000).
const RawOutputLimit = 12 << 10

// bound keeps at most about n bytes of s: its start and, mostly, its end
// (where a command's errors and exit status are), cut between characters,
// with how much was left out between them.
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head := n / 4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	rest, cut := tail(s[head:], n-head)
	return s[:head] + fmt.Sprintf("\n[%d bytes not shown]\n", cut) + rest
}

// firstPath is the path a call-time view is about, as the tool wrote it.
func firstPath(v registry.View) string {
	switch v := v.(type) {
	case registry.GenericCard:
		if len(v.Locations) > 0 {
			return v.Locations[0].Path
		}
	case registry.DiffCard:
		if len(v.Locations) > 0 {
			return v.Locations[0].Path
		}
		if len(v.Diffs) > 0 {
			return v.Diffs[0].Path
		}
	}
	return ""
}
