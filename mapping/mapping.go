// Package mapping is the one translator from session events to ACP updates.
// It is pure: it does no I/O, and the same events translated again (on
// session/load) give the same updates. Tools never talk ACP; they offer
// views (registry.GenericCard, TerminalCard, DiffCard) that land here.
package mapping

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// Tools finds the definition a call was made against (for its presenters).
type Tools interface {
	Get(name string) *registry.Def
}

// Options fix how one session's events render.
type Options struct {
	Cwd string // absolute session root: paths resolve against it, titles relativize to it
	// TerminalOutput: the client opted into Zed's _meta terminal convention.
	TerminalOutput bool
	// Replay: the events are being replayed by session/load, so user
	// messages are sent too (live, the editor already shows them).
	Replay bool
}

// Translator keeps the per-session state the translation needs (which card
// each call got). Build a fresh one for every replay.
type Translator struct {
	tools Tools
	o     Options
	calls map[string]*call
}

type call struct {
	name     string
	args     json.RawMessage
	def      *registry.Def
	view     registry.View
	streamed bool            // live output was sent as terminal_output
	console  strings.Builder // output for the fallback console block
	done     bool
}

// New returns a translator for one session.
func New(tools Tools, o Options) *Translator {
	return &Translator{tools: tools, o: o, calls: map[string]*call{}}
}

// Translate turns one event into the updates the editor should see.
func (t *Translator) Translate(ev session.Event) []acp.Update {
	switch ev.Type {
	case session.TypeUserMessage:
		if !t.o.Replay {
			return nil
		}
		m, err := session.Decode[session.UserMessage](ev)
		if err != nil {
			return nil
		}
		var blocks []acp.ContentBlock
		if json.Unmarshal(m.Prompt, &blocks) != nil {
			blocks = []acp.ContentBlock{acp.TextBlock(m.Text)}
		}
		out := make([]acp.Update, 0, len(blocks))
		for _, b := range blocks {
			out = append(out, acp.UserMessageChunk{Content: b})
		}
		return out
	case session.TypeAssistantChunk:
		c, err := session.Decode[session.AssistantChunk](ev)
		if err != nil || c.Text == "" {
			return nil
		}
		chunk := acp.ContentChunk{Content: acp.TextBlock(c.Text), MessageID: c.MessageID}
		if c.Kind == "thought" {
			return []acp.Update{acp.AgentThoughtChunk(chunk)}
		}
		return []acp.Update{acp.AgentMessageChunk(chunk)}
	case session.TypeNotice:
		n, err := session.Decode[session.Notice](ev)
		if err != nil {
			return nil
		}
		return []acp.Update{acp.AgentMessageChunk{Content: acp.TextBlock(n.Text)}}
	case session.TypeToolCall:
		c, err := session.Decode[session.ToolCall](ev)
		if err != nil {
			return nil
		}
		return []acp.Update{t.toolCall(c)}
	case session.TypeToolStatus:
		s, err := session.Decode[session.ToolStatus](ev)
		if err != nil || t.calls[s.CallID] == nil || t.calls[s.CallID].done {
			return nil
		}
		st := acp.StatusInProgress
		if s.Status == "awaiting_permission" {
			st = acp.StatusPending
		}
		return []acp.Update{acp.ToolCallUpdate{ToolCallID: s.CallID, Status: &st}}
	case session.TypeToolOutput:
		o, err := session.Decode[session.ToolOutput](ev)
		if err != nil {
			return nil
		}
		return t.toolOutput(o)
	case session.TypeToolResult:
		r, err := session.Decode[session.ToolResult](ev)
		if err != nil {
			return nil
		}
		return []acp.Update{t.toolResult(r)}
	}
	return nil
}

// Unfinished returns the ids of calls that have a card but no result, in no
// particular order: the agent fails them when a turn is cut short.
func (t *Translator) Unfinished() []string {
	var ids []string
	for id, c := range t.calls {
		if !c.done {
			ids = append(ids, id)
		}
	}
	return ids
}

func (t *Translator) toolCall(c session.ToolCall) acp.Update {
	st := &call{name: c.Name, args: c.Args}
	if t.tools != nil {
		st.def = t.tools.Get(c.Name)
	}
	st.view = st.def.PresentCall(c.Args)
	if st.view == nil {
		st.view = registry.GenericCard{Title: c.Name, Kind: "other"}
	}
	t.calls[c.CallID] = st

	tc := acp.ToolCall{ToolCallID: c.CallID, Status: acp.StatusPending, RawInput: rawJSON(c.Args)}
	switch v := st.view.(type) {
	case registry.TerminalCard:
		tc.Title, tc.Kind = v.Command, acp.KindExecute
		if v.Description != "" {
			tc.Content = append(tc.Content, acp.ContentItem(acp.TextBlock(v.Description)))
		}
		if t.o.TerminalOutput {
			tc.Content = append(tc.Content, acp.TerminalItem(c.CallID))
			tc.Meta = acp.Meta{"terminal_info": map[string]any{"terminal_id": c.CallID, "cwd": t.abs(v.Cwd)}}
		}
	case registry.DiffCard:
		tc.Kind = acp.KindEdit
		tc.Title, tc.Locations = t.titleAndLocations(v.Title, v.Locations, v.Diffs)
		tc.Content = t.diffs(v.Diffs)
	case registry.GenericCard:
		tc.Kind = kind(v.Kind)
		tc.Title, tc.Locations = t.titleAndLocations(v.Title, v.Locations, nil)
		tc.Content = textItems(v.Content)
	}
	tc.Meta = withParent(tc.Meta, c.Parent)
	return tc
}

func (t *Translator) toolOutput(o session.ToolOutput) []acp.Update {
	st := t.calls[o.CallID]
	if st == nil || st.done || o.Data == "" {
		return nil
	}
	if _, ok := st.view.(registry.TerminalCard); !ok {
		return nil
	}
	if t.o.TerminalOutput {
		st.streamed = true
		return []acp.Update{acp.ToolCallUpdate{ToolCallID: o.CallID, Meta: acp.Meta{
			"terminal_output": map[string]any{"terminal_id": o.CallID, "data": o.Data}}}}
	}
	st.console.WriteString(o.Data)
	return []acp.Update{acp.ToolCallUpdate{ToolCallID: o.CallID, Content: []acp.ToolCallContent{
		acp.ContentItem(acp.TextBlock(console(tail(st.console.String(), consoleLimit))))}}}
}

// consoleLimit bounds the fallback console block re-sent as output grows.
const consoleLimit = 64 << 10

func (t *Translator) toolResult(r session.ToolResult) acp.Update {
	st := t.calls[r.CallID]
	if st == nil {
		// A result without a card (a late or unknown id): show it generically.
		st = &call{view: registry.GenericCard{Kind: "other"}}
		t.calls[r.CallID] = st
	}
	st.done = true
	status := acp.StatusCompleted
	if r.Result.IsError {
		status = acp.StatusFailed
	}
	u := acp.ToolCallUpdate{ToolCallID: r.CallID, Status: &status}
	view := st.def.PresentResult(st.args, r.Result)
	if tv, ok := view.(registry.TerminalCard); ok {
		if _, wasTerminal := st.view.(registry.TerminalCard); !wasTerminal {
			view = nil // orphan guard: a terminal result needs a terminal card
		} else {
			if tv.ExitCode != nil && *tv.ExitCode != 0 || tv.Signal != "" || tv.TimedOut {
				status = acp.StatusFailed
			}
			return t.terminalResult(r.CallID, st, tv, u)
		}
	}
	switch v := view.(type) {
	case registry.DiffCard:
		var title string
		title, u.Locations = t.titleAndLocations(v.Title, v.Locations, v.Diffs)
		if title != "" {
			u.Title = &title
		}
		u.Content = t.diffs(v.Diffs)
		if len(u.Content) == 0 {
			u.Content = textItems(r.Result.Content)
		}
	case registry.GenericCard:
		if v.Title != "" {
			title, locs := t.titleAndLocations(v.Title, v.Locations, nil)
			u.Title, u.Locations = &title, locs
		}
		u.Content = textItems(v.Content)
		if len(u.Content) == 0 {
			u.Content = textItems(r.Result.Content)
		}
	default:
		u.Content = textItems(r.Result.Content)
	}
	if u.Content == nil {
		u.Content = []acp.ToolCallContent{} // never leave a stale card body
	}
	u.RawOutput = rawOutput(r.Result)
	return u
}

func (t *Translator) terminalResult(id string, st *call, v registry.TerminalCard, u acp.ToolCallUpdate) acp.Update {
	raw := map[string]any{"exit_code": v.ExitCode, "signal": nilIfEmpty(v.Signal), "timed_out": v.TimedOut, "truncated": v.Truncated}
	u.RawOutput, _ = json.Marshal(raw)
	if t.o.TerminalOutput {
		meta := acp.Meta{"terminal_exit": map[string]any{"terminal_id": id, "exit_code": v.ExitCode, "signal": nilIfEmpty(v.Signal)}}
		if !st.streamed && v.Output != "" {
			// Replay (or a command that streamed nothing): the stored output, once.
			meta["terminal_output"] = map[string]any{"terminal_id": id, "data": v.Output}
		}
		u.Meta = meta
		return u // no content: it would replace the terminal block
	}
	out := v.Output
	if out == "" {
		out = st.console.String()
	}
	u.Content = []acp.ToolCallContent{acp.ContentItem(acp.TextBlock(console(tail(out, consoleLimit))))}
	return u
}

func (t *Translator) diffs(ds []registry.FileDiff) []acp.ToolCallContent {
	var out []acp.ToolCallContent
	for _, d := range ds {
		out = append(out, acp.DiffItem(t.abs(d.Path), d.OldText, d.NewText))
	}
	return out
}

// titleAndLocations resolves locations to absolute paths and shows the
// title's path relative to the cwd when it lies inside it.
func (t *Translator) titleAndLocations(title string, locs []registry.Location, diffs []registry.FileDiff) (string, []acp.ToolCallLocation) {
	var out []acp.ToolCallLocation
	for _, l := range locs {
		loc := acp.ToolCallLocation{Path: t.abs(l.Path)}
		if l.Line > 0 {
			line := l.Line
			loc.Line = &line
		}
		out = append(out, loc)
	}
	raw := ""
	switch {
	case len(locs) > 0:
		raw = locs[0].Path
	case len(diffs) > 0:
		raw = diffs[0].Path
	}
	return t.relTitle(title, raw), out
}

func (t *Translator) abs(p string) string {
	if p == "" {
		return t.o.Cwd
	}
	if filepath.IsAbs(p) || t.o.Cwd == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(t.o.Cwd, p)
}

// relTitle replaces the raw path in title with its form relative to the cwd,
// when the path is inside the cwd.
func (t *Translator) relTitle(title, raw string) string {
	if raw == "" || t.o.Cwd == "" || !strings.Contains(title, raw) {
		return title
	}
	rel, err := filepath.Rel(t.o.Cwd, t.abs(raw))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return title
	}
	return strings.ReplaceAll(title, raw, rel)
}

func kind(k string) acp.ToolKind {
	switch acp.ToolKind(k) {
	case acp.KindRead, acp.KindEdit, acp.KindDelete, acp.KindMove, acp.KindSearch, acp.KindExecute,
		acp.KindThink, acp.KindFetch, acp.KindSwitchMode:
		return acp.ToolKind(k)
	}
	return acp.KindOther
}

func textItems(cs []registry.Content) []acp.ToolCallContent {
	var out []acp.ToolCallContent
	for _, c := range cs {
		switch c.Type {
		case "text":
			out = append(out, acp.ContentItem(acp.TextBlock(c.Text)))
		case "image":
			out = append(out, acp.ContentItem(acp.ContentBlock{Type: "image", Data: c.Data, MimeType: c.MimeType}))
		}
	}
	return out
}

// rawJSON passes valid JSON through and quotes anything else, so a model's
// broken arguments still show.
func rawJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(b) {
		return b
	}
	q, _ := json.Marshal(string(b))
	return q
}

func rawOutput(r registry.Result) json.RawMessage {
	out := map[string]any{"content": r.Text()}
	if r.IsError {
		out["isError"] = true
	}
	if r.Code != "" {
		out["code"] = r.Code
	}
	b, _ := json.Marshal(out)
	return b
}

func console(s string) string {
	return fmt.Sprintf("```console\n%s\n```", strings.TrimRight(s, "\n"))
}

// tail keeps the last n bytes of s, starting on a line (or rune) boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 1024 {
		return s[i+1:]
	}
	for len(s) > 0 && s[0]&0xC0 == 0x80 {
		s = s[1:]
	}
	return s
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
