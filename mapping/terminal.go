package mapping

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/internal/ansi"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// Terminal cards follow Zed's _meta convention (Zed's terminal_output client capability) when the
// client advertised it:
//
//	tool_call         content [description?, {terminal}], _meta.terminal_info {terminal_id, cwd}
//	tool_call_update  _meta.terminal_output {terminal_id, data}   (repeated while output comes)
//	tool_call_update  status, rawOutput, _meta.terminal_exit {terminal_id, exit_code, signal}
//
// The final update carries no content: content replaces the card's whole
// array, and the terminal block would be lost. The terminal id is the tool
// call id. On replay (no live output was logged) the stored output is sent
// in terminal_output updates right before the final one.
//
// Without the convention a terminal is a fenced console block in content,
// re-sent whole (a card's content can only be replaced) as output grows,
// keeping the last ConsoleLimit bytes.

// MaxOutputChunk bounds the data of one terminal_output update. The agent's
// output coalescer uses the same bound. Zed keeps the last 2,000 raw
// messages of a connection in memory (for its ACP log view), so the size
// of one message is what a long command's output costs it there.
const MaxOutputChunk = 16 << 10

// ConsoleLimit bounds the output shown in a fallback console block.
const ConsoleLimit = 32 << 10

func (t *Translator) terminalCallContent(id string, v registry.TerminalCard) []acp.ToolCallContent {
	var out []acp.ToolCallContent
	if v.Description != "" {
		out = append(out, acp.ContentItem(acp.TextBlock(v.Description)))
	}
	if t.o.TerminalOutput {
		out = append(out, acp.TerminalItem(id))
	}
	return out
}

// toolOutput shows live output of a running call. Output of a call whose
// card is not a terminal has nowhere to go and is dropped (the result shows it).
func (t *Translator) toolOutput(o session.ToolOutput) []acp.Update {
	c := t.calls[o.CallID]
	if c == nil || c.done || o.Data == "" {
		return nil
	}
	v, ok := c.view.(registry.TerminalCard)
	if !ok {
		return nil
	}
	data := strings.ToValidUTF8(o.Data, "\uFFFD")
	if t.o.TerminalOutputDelta {
		// The client appends each delta itself: nothing is re-sent whole.
		// Without Zed's terminal the final update still carries the whole
		// console block, so the card ends complete for any client.
		c.streamed = t.o.TerminalOutput
		if !t.o.TerminalOutput {
			c.appendConsole(data)
		}
		return outputUpdates(o.CallID, c.name, t.outputKey(), data)
	}
	if t.o.TerminalOutput {
		c.streamed = true
		return outputUpdates(o.CallID, c.name, t.outputKey(), data)
	}
	c.appendConsole(data)
	text, dropped := c.consoleText()
	content := append(t.terminalCallContent(o.CallID, v), acp.ContentItem(acp.TextBlock(console(text, dropped, ""))))
	return []acp.Update{acp.ToolCallUpdate{ToolCallID: o.CallID, Name: c.name, Content: content}}
}

// outputKey is the _meta key live output goes under: the delta
// convention when the client asked for it, else Zed's.
func (t *Translator) outputKey() string {
	if t.o.TerminalOutputDelta {
		return "terminal_output_delta"
	}
	return "terminal_output"
}

// outputUpdates sends data as _meta[key] {terminal_id, data} updates
// (key terminal_output or terminal_output_delta: both are appends) of at
// most MaxOutputChunk bytes each, cut between characters.
func outputUpdates(id, name, key, data string) []acp.Update {
	var out []acp.Update
	for _, chunk := range chunks(data, MaxOutputChunk) {
		out = append(out, acp.ToolCallUpdate{ToolCallID: id, Name: name, Meta: acp.Meta{
			key: map[string]any{"terminal_id": id, "data": chunk}}})
	}
	return out
}

// terminalResult closes a terminal card with the command's exit status.
func (t *Translator) terminalResult(id string, c *call, v registry.TerminalCard, r registry.Result) []acp.Update {
	failed := r.IsError || v.ExitCode != nil && *v.ExitCode != 0 || v.Signal != "" || v.TimedOut
	status := acp.StatusCompleted
	if failed {
		status = acp.StatusFailed
	}
	exit, signal := exitCode(v.ExitCode), nilIfEmpty(v.Signal)
	u := acp.ToolCallUpdate{ToolCallID: id, Name: c.name, Status: &status, RawOutput: rawOutput(r)}
	callView := c.view.(registry.TerminalCard)
	if !t.o.TerminalOutput {
		out, dropped := v.Output, int64(0)
		if out == "" {
			out, dropped = c.consoleText()
		} else {
			var cut int
			out, cut = tail(strings.ToValidUTF8(out, "\uFFFD"), ConsoleLimit)
			dropped = int64(cut)
		}
		u.Content = append(t.terminalCallContent(id, callView),
			acp.ContentItem(acp.TextBlock(console(out, dropped, exitLine(v)))))
		return []acp.Update{u}
	}
	var ups []acp.Update
	if !c.streamed && v.Output != "" {
		ups = outputUpdates(id, c.name, t.outputKey(), strings.ToValidUTF8(v.Output, "\uFFFD"))
	}
	if v.Stopped != "" {
		// The terminal's exit shows only the signal; which limit sent it,
		// and where that is set, goes into the terminal before it closes.
		ups = append(ups, outputUpdates(id, c.name, t.outputKey(), "\n"+exitLine(v)+"\n")...)
	}
	u.Meta = acp.Meta{"terminal_exit": map[string]any{"terminal_id": id, "exit_code": exit, "signal": signal}}
	return append(ups, u)
}

// terminalFailure closes a terminal card whose call ended without a
// terminal result: it was rejected, denied, aborted, or the tool failed in
// a way its presenter does not show. With the convention the error text is
// written into the terminal, which is then closed; without it the console
// so far (if any) and the error text make the content.
func (t *Translator) terminalFailure(id string, c *call, view registry.View, r registry.Result) []acp.Update {
	text := textItems(r.Content)
	if g, ok := view.(registry.GenericCard); ok && len(g.Content) > 0 {
		text = textItems(g.Content)
	}
	u := acp.ToolCallUpdate{ToolCallID: id, Name: c.name, Status: statusPtr(resultStatus(r)), RawOutput: rawOutput(r)}
	callView := c.view.(registry.TerminalCard)
	if !t.o.TerminalOutput {
		content := t.terminalCallContent(id, callView)
		if len(c.console) > 0 {
			out, dropped := c.consoleText()
			content = append(content, acp.ContentItem(acp.TextBlock(console(out, dropped, ""))))
		}
		if content = append(content, text...); len(content) > 0 {
			u.Content = content
		}
		return []acp.Update{u}
	}
	// The error goes into the terminal, live and on replay alike, whether
	// or not output came first: replacing the content would drop the
	// terminal block (and any output it shows).
	meta := acp.Meta{"terminal_exit": map[string]any{"terminal_id": id, "exit_code": nil, "signal": nil}}
	var ups []acp.Update
	if msg := r.Text(); msg != "" {
		data := "\n" + strings.ToValidUTF8(msg, "\uFFFD") + "\n"
		if len(data) <= MaxOutputChunk {
			meta[t.outputKey()] = map[string]any{"terminal_id": id, "data": data}
		} else {
			ups = outputUpdates(id, c.name, t.outputKey(), data)
		}
	}
	u.Meta = meta
	return append(ups, u)
}

// exitLine states how a command ended, under a fallback console block
// (a terminal card shows it in its header instead).
func exitLine(v registry.TerminalCard) string {
	switch {
	case v.Stopped != "":
		return "[" + v.Stopped + "]"
	case v.TimedOut:
		return "[timed out]"
	case v.Signal != "":
		return "[killed by signal: " + v.Signal + "]"
	case v.ExitCode != nil && *v.ExitCode != 0:
		return fmt.Sprintf("[exit code: %d]", *v.ExitCode)
	}
	return ""
}

// exitCode is the wire exit code: Zed reads it as an unsigned number, so a
// negative code (Go's -1 for "killed") is sent as null; the signal says why.
func exitCode(p *int) any {
	if p == nil || *p < 0 {
		return nil
	}
	return *p
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// appendConsole keeps output for the fallback console block, bounded: past
// twice the limit the front is cut (and counted) so memory stays flat.
func (c *call) appendConsole(data string) {
	c.console = append(c.console, data...)
	if len(c.console) <= 2*ConsoleLimit {
		return
	}
	cut := len(c.console) - ConsoleLimit
	for cut < len(c.console) && !utf8.RuneStart(c.console[cut]) {
		cut++
	}
	c.dropped += int64(cut)
	c.console = append([]byte(nil), c.console[cut:]...)
}

// consoleText is the console output to show and how many bytes before it
// are not shown.
func (c *call) consoleText() (string, int64) {
	s, cut := tail(string(c.console), ConsoleLimit)
	return s, c.dropped + int64(cut)
}

// console renders output as a fenced console block, with a note for output
// cut from the front and an optional closing status line. The fence is
// longer than any backtick run in the output, so output cannot close it.
// Colour and cursor codes go: a client showing the block as text would
// print them raw (a terminal card keeps them, for a client that renders).
func console(out string, dropped int64, status string) string {
	body := strings.TrimRight(ansi.Strip(out), "\n")
	if dropped > 0 {
		body = fmt.Sprintf("[%d bytes of earlier output not shown]\n", dropped) + body
	}
	if status != "" {
		if body != "" {
			body += "\n"
		}
		body += status
	}
	fence := "```"
	for strings.Contains(body, fence) {
		fence += "`"
	}
	return fence + "console\n" + body + "\n" + fence
}

// tail keeps at most the last n bytes of s, starting on a line boundary when
// one is near, else on a character boundary; cut is how many bytes went.
func tail(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	start := len(s) - n
	if i := strings.IndexByte(s[start:], '\n'); i >= 0 && i < 1024 {
		start += i + 1
	} else {
		for start < len(s) && !utf8.RuneStart(s[start]) {
			start++
		}
	}
	return s[start:], start
}

// chunks cuts s into pieces of at most n bytes, never inside a character.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 { // no boundary in reach (not valid UTF-8): cut anyway
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
