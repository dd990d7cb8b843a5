// Package compact keeps a conversation inside the model's context window:
// when the next request would pass a share of the window, old tool results
// are shortened first, and if that is not enough the older turns are
// replaced by a summary the model writes while the recent ones stay
// verbatim. Everything here is pure: it decides and rewrites message
// slices; the agent asks the model, logs what was done, and a reload
// applies the same rewrites to the same history.
package compact

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/acp-bridge/acp-bridge/model"
)

// Defaults of a Policy.
const (
	DefaultThreshold  = 0.80
	DefaultKeepShare  = 0.20
	DefaultPruneChars = 4000
	// charsPerToken is the rough size of a token where no count is known.
	charsPerToken = 4
)

// Policy says when and how a history is compacted.
type Policy struct {
	Window    int     // the model's context window in tokens
	Threshold float64 // compact before a request passes this share of Window (default 0.8)
	// KeepShare of Window is kept verbatim at the end of the history (default 0.2).
	KeepShare float64
	// PruneChars: older tool results longer than this are shortened to it
	// (default 4000 characters).
	PruneChars int
}

func (p Policy) withDefaults() Policy {
	if p.Threshold <= 0 || p.Threshold > 1 {
		p.Threshold = DefaultThreshold
	}
	if p.KeepShare <= 0 || p.KeepShare >= p.Threshold {
		p.KeepShare = min(DefaultKeepShare, p.Threshold/2)
	}
	if p.PruneChars <= 0 {
		p.PruneChars = DefaultPruneChars
	}
	return p
}

// Limit is the request size, in tokens, past which the history is compacted.
func (p Policy) Limit() int {
	p = p.withDefaults()
	return int(float64(p.Window) * p.Threshold)
}

// Keep is how many tokens of recent history stay verbatim.
func (p Policy) Keep() int {
	p = p.withDefaults()
	return int(float64(p.Window) * p.KeepShare)
}

// Over reports whether a request of this many tokens needs compaction.
func (p Policy) Over(tokens int) bool { return p.Window > 0 && tokens > p.Limit() }

// Tokens estimates the size of messages: about four characters a token,
// plus a little for each message's framing.
func Tokens(msgs []model.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content) + len(m.Reasoning) + 16
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments) + 16
		}
		for _, img := range m.Images {
			n += min(len(img.Data), 4000) // images are billed by size, not base64 length
		}
	}
	return n / charsPerToken
}

// Split returns the index where the recent part of msgs starts: the
// earliest point from which the rest fits in keep tokens, at a user message
// if one qualifies (whole turns stay together), else at an assistant
// message (a call and its results are never parted). 0 means nothing can be
// summarised.
func Split(msgs []model.Message, keep int) int {
	best, bestAny := 0, 0
	tail := 0
	for i := len(msgs) - 1; i >= 1; i-- {
		tail += Tokens(msgs[i : i+1])
		if msgs[i].Role == model.RoleTool {
			continue
		}
		if bestAny == 0 {
			bestAny = i // the last step alone, if nothing else fits
		}
		if tail > keep {
			continue
		}
		bestAny = i
		if msgs[i].Role == model.RoleUser {
			best = i
		}
	}
	if best > 0 {
		return best
	}
	return bestAny
}

// Prune shortens the tool results in msgs[:before] longer than max
// characters to their head and tail with a note, and returns the new slice
// (msgs itself is not changed) and how many results it shortened.
func Prune(msgs []model.Message, before, max int) ([]model.Message, int) {
	if max <= 0 {
		max = DefaultPruneChars
	}
	before = min(before, len(msgs))
	out := msgs
	n := 0
	for i := range before {
		m := msgs[i]
		if m.Role != model.RoleTool || len(m.Content) <= max || strings.HasPrefix(m.Content, prunedMark) {
			continue
		}
		if n == 0 {
			out = append([]model.Message(nil), msgs...)
		}
		out[i].Content = shorten(m.Content, max)
		n++
	}
	return out, n
}

// prunedMark starts a shortened result, so a second Prune leaves it be.
const prunedMark = "[Shortened old tool result]"

func shorten(s string, max int) string {
	head, tail := cut(s, max*2/3, true), cut(s, max/3, false)
	return fmt.Sprintf("%s (%d characters; the middle %d were dropped from the context to save room: run the tool again if you need them)\n%s\n[…]\n%s",
		prunedMark, len(s), len(s)-len(head)-len(tail), head, tail)
}

// cut takes about n bytes from the start (or end) of s on a character boundary.
func cut(s string, n int, fromStart bool) string {
	if n >= len(s) {
		return s
	}
	if fromStart {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n]
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// Instruction asks for the summary; focus is what the user wants kept.
func Instruction(focus string) string {
	s := "Summarise the conversation so far for a fresh context that will continue it; the most recent messages will follow your summary verbatim. " +
		"Keep the user's goals, requests and constraints (the latest request in the user's own words), decisions made and why, " +
		"files and code touched (with paths), commands run and what they showed, errors met and how they were resolved, " +
		"the current state of the work and what remains to do. Be complete but concise; write only the summary."
	if focus = strings.TrimSpace(focus); focus != "" {
		s += " Pay particular attention to: " + focus
	}
	return s
}

// Request is the summary request: the system prompt, the messages to
// summarise, and the instruction.
func Request(system string, old []model.Message, focus string) *model.Request {
	msgs := make([]model.Message, 0, len(old)+2)
	msgs = append(msgs, model.Message{Role: model.RoleSystem, Content: system})
	msgs = append(msgs, old...)
	msgs = append(msgs, model.Message{Role: model.RoleUser, Content: Instruction(focus)})
	return &model.Request{Messages: msgs}
}

// SummaryPrefix opens the message that carries a summary.
const SummaryPrefix = "Summary of our conversation so far (the earlier messages were compacted):\n\n"

// Ack is the model's side of the summary exchange, so turns keep alternating.
const Ack = "Understood. I will continue from this summary."

// Replace is the history after a compaction: the summary, then recent as it was.
func Replace(summary string, recent []model.Message) []model.Message {
	out := make([]model.Message, 0, len(recent)+2)
	out = append(out, model.Message{Role: model.RoleUser, Content: SummaryPrefix + summary})
	if len(recent) == 0 || recent[0].Role != model.RoleAssistant {
		out = append(out, model.Message{Role: model.RoleAssistant, Content: Ack})
	}
	return append(out, recent...)
}
