// Package mappingv2 is the translator from session events to ACP v2
// updates: the one place the v2 dialect is made, beside package mapping's
// v1. It is fed the same events and is as pure (no I/O; the same events
// give the same updates, live and on replay).
//
// What a card shows is decided once, by the tools' presenters through
// mapping (cards, diffs, terminals, notices, controls); this package
// re-expresses those v1 updates in v2's shapes and adds what only v2 has:
//
//   - turn/start → state_update running; turn/end → state_update idle with
//     the stop reason (error with the failure when the turn failed) and, in
//     _meta.replayFrom, the cursor of the log's next event
//     (acp.ReplayCursor), so a client can resume from there;
//   - tool/status awaiting_permission → requires_action, and running again
//     once the call runs;
//   - user/message → a user_message upsert with its id (the id session/prompt
//     answered with), live and on replay; messages and thoughts carry ids
//     (v2 requires them), derived from the log position of their first
//     event, so a replay gives the same ids;
//   - tool_call and tool_call_update → one tool_call_update upsert; a
//     command's card (mapping's _meta terminal convention) → an agent-owned
//     display terminal: terminal_update (command, cwd), terminal_output_chunk
//     (base64), terminal_update with exitStatus;
//   - a diff → changes (add or modify) with a git patch for a new file; the
//     hunks of a modified file carry no line numbers (diffs' design), so
//     their text travels in _meta["acpBridge/hunks"] and the patch is left
//     out, which the draft allows;
//   - plan → plan_update (one plan, id "plan"); modes are the config option
//     of category "mode", so current_mode_update is not sent.
package mappingv2

import (
	"fmt"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/session"
)

// MetaHunks is the _meta key of a modified file's hunks on a v2 diff.
const MetaHunks = "acpBridge/hunks"

// PlanID is the id of the session's one plan.
const PlanID = "plan"

// Translator keeps one session's translation state: mapping's (cards,
// terminals), the foreground state last reported, and the ids of the
// messages being streamed.
type Translator struct {
	v1    *mapping.Translator
	state string // the last state_update's state ("" before any)
	// lastStop is the stop reason of the last idle, for a resume's snapshot.
	lastStop acp.StopReason
	next     int64 // the log position after the last event seen
	// messages are the ids of the messages sent, where each began, for
	// history_truncated's last message kept.
	messages []message
	replay   bool
	commands map[string]string // terminal id -> its command (the card's title)
}

// New returns a v2 translator for one session. o is read as mapping reads
// it; the client-capability options are set as every v2 client takes them
// (display terminals, notices, compactions, boolean options, 1-based lines).
func New(tools mapping.Tools, o mapping.Options) *Translator {
	o.TerminalOutput, o.TerminalOutputDelta = true, false
	o.Notices, o.Compaction, o.BooleanOptions, o.ZeroBasedLines = true, true, true, false
	return &Translator{v1: mapping.New(tools, o), replay: o.Replay, commands: map[string]string{}}
}

// EndReplay switches a translator that replayed a log to live.
func (t *Translator) EndReplay() {
	t.replay = false
	t.v1.EndReplay()
}

// PermissionToolCall is the card a permission request shows (mapping's),
// still in v1's shape: Permission re-expresses the whole request.
func (t *Translator) PermissionToolCall(callID string) (acp.ToolCallUpdate, bool) {
	return t.v1.PermissionToolCall(callID)
}

// Snapshot is the current-state state_update a resume sends after any
// replay: running while a turn runs, else idle with the last stop reason
// (for context: a snapshot is no new completion).
func (t *Translator) Snapshot(running bool) acp.Update {
	if running {
		if t.state == acp.StateRequiresAction {
			return acp.V2StateUpdate{State: acp.StateRequiresAction}
		}
		return acp.V2StateUpdate{State: acp.StateRunning}
	}
	return acp.V2StateUpdate{State: acp.StateIdle, StopReason: t.lastStop,
		Meta: acp.Meta{acp.MetaReplayFrom: acp.ReplayCursor(max(t.next, 1))}}
}

// Translate turns one event into the v2 updates the client should see.
func (t *Translator) Translate(ev session.Event) []acp.Update {
	if ev.Seq >= t.next {
		t.next = ev.Seq + 1
	}
	switch p := ev.Payload.(type) {
	case session.UserMessage:
		return []acp.Update{t.user(ev.Seq, p)}
	case session.Rewind:
		last := t.truncate(p)
		if t.replay {
			return nil // a replay leaves the rewound messages out (agent/load.go)
		}
		return []acp.Update{acp.V2HistoryTruncated{LastMessageID: last}}
	case session.UserSteer:
		if !t.replay {
			return nil // the client showed it when the user sent it
		}
		return []acp.Update{t.user(ev.Seq, session.UserMessage(p))}
	case session.TurnStart:
		t.state = acp.StateRunning
		return []acp.Update{acp.V2StateUpdate{State: acp.StateRunning}}
	case session.TurnEnd:
		t.state = acp.StateIdle
		u := acp.V2StateUpdate{State: acp.StateIdle, StopReason: acp.StopReason(p.StopReason),
			Meta: acp.Meta{acp.MetaReplayFrom: acp.ReplayCursor(ev.Seq + 1)}}
		if p.Error != "" {
			u.StopReason = acp.StopError
			u.Error = &acp.Error{Code: acp.CodeInternalError, Message: p.Error}
		}
		if u.StopReason == "" {
			u.StopReason = acp.StopEndTurn
		}
		t.lastStop = u.StopReason
		return []acp.Update{u}
	case session.ToolStatus:
		var out []acp.Update
		switch {
		case p.Status == "awaiting_permission" && t.state == acp.StateRunning:
			t.state = acp.StateRequiresAction
			out = append(out, acp.V2StateUpdate{State: acp.StateRequiresAction})
		case p.Status == "running" && t.state == acp.StateRequiresAction:
			t.state = acp.StateRunning
			out = append(out, acp.V2StateUpdate{State: acp.StateRunning})
		}
		return append(out, t.convert(ev.Seq, t.v1.Translate(ev))...)
	case session.ToolResult:
		var out []acp.Update
		if t.state == acp.StateRequiresAction { // refused or cancelled while asked
			t.state = acp.StateRunning
			out = append(out, acp.V2StateUpdate{State: acp.StateRunning})
		}
		return append(out, t.convert(ev.Seq, t.v1.Translate(ev))...)
	}
	return t.convert(ev.Seq, t.v1.Translate(ev))
}

// message is a message sent: its id and the log position it began at.
type message struct {
	seq int64
	id  string
}

// began notes a message's id the first time it is sent.
func (t *Translator) began(seq int64, id string) {
	if n := len(t.messages); n == 0 || t.messages[n-1].id != id {
		t.messages = append(t.messages, message{seq, id})
	}
}

// truncate forgets the messages a rewind took back and returns the id of
// the last one kept before them.
func (t *Translator) truncate(p session.Rewind) string {
	from := p.Before // the first event taken back
	if p.After > 0 {
		from = p.After + 1
	}
	last := ""
	kept := t.messages[:0]
	for _, m := range t.messages {
		switch {
		case m.seq < from:
			last = m.id
		case p.Until > 0 && m.seq >= p.Until:
		default:
			continue
		}
		kept = append(kept, m)
	}
	t.messages = kept
	return last
}

// user is a user message upsert; id is the one session/prompt answered
// with, or (a log written before v2, a steered message) one made of the
// log position.
func (t *Translator) user(seq int64, p session.UserMessage) acp.Update {
	id := mapping.UserMessageID(seq, p)
	t.began(seq, id)
	blocks, ok := p.PromptBlocks()
	if !ok {
		blocks = []acp.ContentBlock{acp.TextBlock(p.Text)}
	}
	return acp.V2UserMessage{MessageID: id, Content: blocks}
}

// convert re-expresses mapping's v1 updates of the event at seq.
func (t *Translator) convert(seq int64, ups []acp.Update) []acp.Update {
	if len(ups) == 0 {
		return nil
	}
	out := make([]acp.Update, 0, len(ups))
	for _, u := range ups {
		switch u := u.(type) {
		case acp.UserMessageChunk:
			// Sent by user above, never from mapping's chunks.
		case acp.AgentMessageChunk: // named by mapping (messageids.go)
			t.began(seq, u.MessageID)
			out = append(out, u)
		case acp.AgentThoughtChunk:
			t.began(seq, u.MessageID)
			out = append(out, u)
		case acp.ToolCall:
			out = append(out, t.toolCall(u)...)
		case acp.ToolCallUpdate:
			out = append(out, t.toolCallUpdate(u)...)
		case acp.Plan:
			out = append(out, acp.V2PlanUpdate{Plan: acp.V2Plan{Type: "items", PlanID: PlanID, Entries: u.Entries}})
		case acp.AvailableCommandsUpdate:
			cmds := make([]acp.V2AvailableCommand, 0, len(u.AvailableCommands))
			for _, c := range u.AvailableCommands {
				v := acp.V2AvailableCommand{Type: "command", Name: c.Name, Description: c.Description}
				if c.Input != nil {
					v.Input = &acp.V2CommandInput{Type: "text", Hint: c.Input.Hint}
				}
				cmds = append(cmds, v)
			}
			out = append(out, acp.V2AvailableCommandsUpdate{AvailableCommands: cmds})
		case acp.CurrentModeUpdate:
			// The mode is a config option; its config_option_update follows.
		case acp.ConfigOptionUpdate:
			out = append(out, acp.V2ConfigOptionUpdate{ConfigOptions: acp.V2ConfigOptions(u.ConfigOptions)})
		default:
			// session_info_update, usage_update, notice, compaction_update
			// and compaction_summary_chunk have v1's shape in v2.
			out = append(out, u)
		}
	}
	return out
}

// toolCall is a new card: its display terminal first (a card's content
// may name it only once the client knows it), then the upsert.
func (t *Translator) toolCall(u acp.ToolCall) []acp.Update {
	var out []acp.Update
	meta := u.Meta
	if info, ok := termMeta(meta, "terminal_info"); ok {
		id := fmt.Sprint(info["terminal_id"])
		cmd := u.Title
		t.commands[id] = cmd
		tu := acp.V2TerminalUpdate{TerminalID: id, Command: &cmd}
		if cwd, ok := info["cwd"].(string); ok && cwd != "" {
			tu.Cwd = &cwd
		}
		out = append(out, tu)
		meta = without(meta, "terminal_info")
	}
	title, kind, status := u.Title, u.Kind, u.Status
	if status == "" {
		status = acp.StatusPending
	}
	v := acp.V2ToolCallUpdate{ToolCallID: u.ToolCallID, Name: u.Name, Title: &title, Status: &status,
		Content: Content(u.Content), Locations: u.Locations, RawInput: u.RawInput, RawOutput: u.RawOutput, Meta: meta}
	if kind != "" {
		v.Kind = &kind
	}
	if v.Content == nil {
		v.Content = []acp.V2ToolCallContent{}
	}
	return append(out, v)
}

// toolCallUpdate splits mapping's update into the terminal's output and
// exit (display terminal updates) and what is left of the card's.
func (t *Translator) toolCallUpdate(u acp.ToolCallUpdate) []acp.Update {
	var out []acp.Update
	meta := u.Meta
	for _, key := range []string{"terminal_output", "terminal_output_delta"} {
		if o, ok := termMeta(meta, key); ok {
			if data, _ := o["data"].(string); data != "" {
				out = append(out, acp.V2TerminalOutputChunk{TerminalID: fmt.Sprint(o["terminal_id"]), Data: []byte(data)})
			}
			meta = without(meta, key)
		}
	}
	if e, ok := termMeta(meta, "terminal_exit"); ok {
		st := &acp.V2TerminalExitStatus{}
		switch c := e["exit_code"].(type) {
		case int:
			st.ExitCode = &c
		case float64:
			n := int(c)
			st.ExitCode = &n
		}
		if s, ok := e["signal"].(string); ok && s != "" {
			st.Signal = &s
		}
		out = append(out, acp.V2TerminalUpdate{TerminalID: fmt.Sprint(e["terminal_id"]), ExitStatus: st})
		meta = without(meta, "terminal_exit")
	}
	v := acp.V2ToolCallUpdate{ToolCallID: u.ToolCallID, Name: u.Name, Title: u.Title, Kind: u.Kind, Status: u.Status,
		Content: Content(u.Content), Locations: u.Locations, RawInput: u.RawInput, RawOutput: u.RawOutput, Meta: meta}
	if u.Content != nil && v.Content == nil {
		v.Content = []acp.V2ToolCallContent{}
	}
	if v.Title == nil && v.Kind == nil && v.Status == nil && v.Content == nil && v.Locations == nil &&
		v.RawInput == nil && v.RawOutput == nil && len(v.Meta) == 0 {
		return out // only terminal news
	}
	return append(out, v)
}

func termMeta(m acp.Meta, key string) (map[string]any, bool) {
	v, ok := m[key].(map[string]any)
	return v, ok
}

func without(m acp.Meta, key string) acp.Meta {
	out := acp.Meta{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Content re-expresses a card's content: content items as they are, a
// terminal by id, and each file's diff items as one v2 diff.
func Content(items []acp.ToolCallContent) []acp.V2ToolCallContent {
	if items == nil {
		return nil
	}
	var out []acp.V2ToolCallContent
	diffAt := map[string]int{} // path -> index in out of its diff
	for _, c := range items {
		switch c.Type {
		case "content":
			out = append(out, acp.V2ToolCallContent{Type: "content", Content: c.Content})
		case "terminal":
			out = append(out, acp.V2ToolCallContent{Type: "terminal", TerminalID: c.TerminalID})
		case "diff":
			i, seen := diffAt[c.Path]
			if !seen {
				op := "modify"
				if c.OldText == nil {
					op = "add"
				}
				d := acp.V2ToolCallContent{Type: "diff", Changes: []acp.V2DiffChange{{Operation: op, Path: c.Path, FileType: "text"}}}
				if op == "add" {
					d.Patch = &acp.V2DiffPatch{Format: "git_patch", Text: AddPatch(c.Path, c.NewText)}
				}
				out = append(out, d)
				i = len(out) - 1
				diffAt[c.Path] = i
			}
			if c.OldText != nil {
				d := &out[i]
				if d.Meta == nil {
					d.Meta = acp.Meta{}
				}
				hunks, _ := d.Meta[MetaHunks].([]map[string]any)
				d.Meta[MetaHunks] = append(hunks, map[string]any{"oldText": *c.OldText, "newText": c.NewText})
			}
		}
	}
	return out
}

// AddPatch is the git patch that creates path with text.
func AddPatch(path, text string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git %s %s\nnew file mode 100644\n--- /dev/null\n+++ %s\n", path, path, path)
	if text == "" {
		return b.String()
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	fmt.Fprintf(&b, "@@ -0,0 +1,%d @@\n", len(lines))
	for _, l := range lines {
		b.WriteString("+" + l)
		if !strings.HasSuffix(l, "\n") {
			b.WriteString("\n\\ No newline at end of file\n")
		}
	}
	return b.String()
}

// Permission re-expresses a permission request for a v2 client: the card
// as a tool_call subject, titled by the card.
func Permission(req *acp.RequestPermissionRequest) *acp.V2RequestPermissionRequest {
	tc := req.ToolCall
	title := tc.ToolCallID
	if tc.Title != nil && *tc.Title != "" {
		title = *tc.Title
	}
	v := acp.V2ToolCallUpdate{ToolCallID: tc.ToolCallID, Name: tc.Name, Title: tc.Title, Kind: tc.Kind, Status: tc.Status,
		Content: Content(tc.Content), Locations: tc.Locations, RawInput: tc.RawInput, RawOutput: tc.RawOutput}
	return &acp.V2RequestPermissionRequest{SessionID: req.SessionID, Title: title,
		Subject: &acp.V2PermissionSubject{Type: "tool_call", ToolCall: v}, Options: req.Options, Meta: req.Meta}
}
