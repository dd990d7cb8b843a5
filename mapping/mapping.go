// Package mapping is the one translator from session events to ACP updates.
// It is pure: it does no I/O, and the same events translated again (on
// session/load) give the same updates. Tools never talk ACP; they offer
// views (registry.GenericCard, TerminalCard, DiffCard) that land here.
//
// The life of a tool card on the wire:
//
//   - tool/call → tool_call with status pending. The call is logged before
//     any policy runs, so a permission prompt always attaches to a card that
//     is already on screen.
//   - While the user is asked for permission the card stays pending: ACP
//     defines pending as "not started yet, input streaming or awaiting
//     approval", and Zed shows its "Waiting for confirmation" state from the
//     permission request itself. The tool/status "awaiting_permission" event
//     therefore sends nothing, live and on replay alike.
//   - tool/status "running" (the call passed policy and dispatches) →
//     tool_call_update in_progress.
//   - tool/output (live only, never logged) → terminal_output, or a
//     refreshed console block when the client lacks the terminal convention.
//   - tool/result → the final tool_call_update, completed or failed, with
//     rawOutput. A replay sends a terminal's stored output right before it.
package mapping

import (
	"encoding/json"

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
	// TerminalOutput: the client opted into Zed's _meta terminal convention
	// (clientCapabilities._meta.terminal_output). Without it, terminal cards
	// fall back to a fenced console block.
	TerminalOutput bool
	// Compaction: the client shows compactions (clientCapabilities.session.compaction).
	Compaction bool
	// TerminalOutputDelta: the client wants live output as
	// _meta.terminal_output_delta appends (codex-acp's convention,
	// clientCapabilities._meta.terminal_output_delta); it wins over
	// terminal_output for the live output when a client sets both.
	TerminalOutputDelta bool
	// Notices: the client shows `notice` updates
	// (clientCapabilities.session.notices); without it a notice is agent text.
	Notices bool
	// Replay: the events are being replayed by session/load, so user
	// messages are sent too (live, the editor already shows them).
	Replay bool
	// ZeroBasedLines: the client reads locations[].line as a 0-based row
	// (see ZeroBasedLines); lines go out one less than the 1-based line.
	ZeroBasedLines bool
	// BooleanOptions: the client takes boolean config options
	// (clientCapabilities.session.configOptions.boolean); without it they
	// are left out of every option list (the kit's ACP-CONFIG-003).
	BooleanOptions bool
}

// Translator keeps the per-session state the translation needs (which card
// each call got, what a terminal has shown). Build a fresh one for every
// replay. It is not safe for concurrent use: the agent serializes events.
type Translator struct {
	tools Tools
	o     Options
	calls map[string]*call
	mode  string // the last permission mode sent (controls.go)
	// hideThoughts: the show_thoughts switch is off (the last controls
	// said so), so reasoning stays in the log and out of the thread.
	hideThoughts bool
	// text and thought are the ids of the agent message and thought being
	// streamed ("" between messages; messageids.go).
	text, thought string
}

// call is what the translator remembers about one card.
type call struct {
	name string
	// agent is the subagent that made the call: every title the card gets
	// starts with its name, in a client that nests cards and in one that
	// lists them alike.
	agent string
	args  json.RawMessage
	def   *registry.Def
	// in is args decoded by def: the live call's own (its event carries
	// it), or decoded once here on replay; dropped with the result.
	in   *registry.Input
	view registry.View // the call-time view (never nil)
	// streamed: live output reached the terminal (terminal_output), so the
	// result must not send the stored output again.
	streamed bool
	console  []byte // output so far, for the fallback console block (bounded)
	dropped  int64  // bytes cut from the front of console
	done     bool
}

// titled is a title of the call's card: the subagent's name first, for
// one of a subagent's calls.
func (c *call) titled(title string) string {
	if c.agent == "" {
		return title
	}
	return c.agent + ": " + title
}

// carded reports whether the editor has a card for the call.
func (c *call) carded() bool {
	_, none := c.view.(registry.NoCard)
	return !none
}

// Carded reports whether a call of this tool with these arguments gets a
// card in the editor (its presenter does not say NoCard).
func Carded(tools Tools, ev session.ToolCall) bool {
	var d *registry.Def
	if tools != nil {
		d = tools.Get(ev.Name)
	}
	_, none := d.Reuse(ev.Input, ev.Args).PresentCall().(registry.NoCard)
	return !none
}

// New returns a translator for one session.
func New(tools Tools, o Options) *Translator {
	return &Translator{tools: tools, o: o, calls: map[string]*call{}}
}

// user is the user's own message, which a replay sends back; live, the
// editor has it already.
func (t *Translator) user(seq int64, p session.UserMessage) []acp.Update {
	if !t.o.Replay {
		return nil
	}
	id := UserMessageID(seq, p)
	blocks, ok := p.PromptBlocks() // decoded once for the fold and here (session.WithBlocks)
	if !ok {
		blocks = []acp.ContentBlock{acp.TextBlock(p.Text)}
	}
	// Consecutive text blocks are one chunk with the separator the model
	// read (acp.TextSeparator): a client glues a message's chunks.
	out := make([]acp.Update, 0, len(blocks))
	for i, b := range blocks {
		if i > 0 && b.Type == "text" && blocks[i-1].Type == "text" {
			prev := out[len(out)-1].(acp.UserMessageChunk)
			prev.Content.Text += acp.TextSeparator(prev.Content.Text, b.Text) + b.Text
			out[len(out)-1] = prev
			continue
		}
		out = append(out, acp.UserMessageChunk{Content: b, MessageID: id})
	}
	return out
}

// Translate turns one event into the updates the editor should see, in
// order; every message chunk names its message (messageids.go).
func (t *Translator) Translate(ev session.Event) []acp.Update {
	t.boundary(ev.Payload)
	return t.withIDs(ev.Seq, t.translate(ev))
}

func (t *Translator) translate(ev session.Event) []acp.Update {
	switch p := ev.Payload.(type) {
	case session.UserMessage:
		return t.user(ev.Seq, p)
	case session.UserSteer:
		// The client showed it when the user sent it, as it shows a prompt.
		return t.user(ev.Seq, session.UserMessage(p))
	case session.AssistantChunk:
		if p.Text == "" {
			return nil
		}
		chunk := acp.ContentChunk{Content: acp.TextBlock(p.Text), MessageID: p.MessageID}
		if p.Kind == "thought" {
			if t.hideThoughts {
				return nil
			}
			return []acp.Update{acp.AgentThoughtChunk(chunk)}
		}
		return []acp.Update{acp.AgentMessageChunk(chunk)}
	case session.Notice:
		return t.notice(p)
	case session.AttemptAbandoned:
		if t.o.Replay || p.Note == "" {
			return nil // a replay leaves the abandoned chunks out (agent/load.go)
		}
		return []acp.Update{acp.AgentMessageChunk{Content: acp.TextBlock(p.Note)}}
	case session.ToolCall:
		return t.toolCall(p)
	case session.ToolStatus:
		return t.toolStatus(p)
	case session.ToolOutput:
		return t.toolOutput(p)
	case session.ToolResult:
		return t.toolResult(p)
	case session.JobStart, session.JobOutput, session.JobEnd:
		return t.job(p)
	case session.Compaction:
		return t.compaction(p)
	case session.CompactionChunk:
		return t.compactionChunk(p)
	}
	return t.controls(ev.Payload)
}

// EndReplay switches a translator that replayed a log to live: from now on
// the editor shows the user's messages itself. session/load replays through
// the translator the session then goes on with.
func (t *Translator) EndReplay() { t.o.Replay = false }

func (t *Translator) toolStatus(s session.ToolStatus) []acp.Update {
	c := t.calls[s.CallID]
	if c == nil || c.done || !c.carded() || s.Status != "running" {
		// awaiting_permission: the card is pending already (see the package doc).
		return nil
	}
	st := acp.StatusInProgress
	return []acp.Update{acp.ToolCallUpdate{ToolCallID: s.CallID, Name: c.name, Status: &st}}
}

// rawJSON is a card's rawInput: no arguments show as {}, the rest by
// registry.ArgsJSON (a model's broken arguments still show).
func rawJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return registry.ArgsJSON(b)
}

func statusPtr(s acp.ToolCallStatus) *acp.ToolCallStatus { return &s }
