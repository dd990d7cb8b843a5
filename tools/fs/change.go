package fs

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/registry"
)

// changeOut is what a file mutation returns: the file and the hunks it
// applied, which the result stores so the card needs no I/O.
type changeOut struct {
	Path     string              `json:"path"`
	Created  bool                `json:"created,omitempty"`
	Replaced int                 `json:"replaced,omitempty"` // edit: occurrences replaced
	All      bool                `json:"all,omitempty"`      // edit: replace_all was set
	Diffs    []registry.FileDiff `json:"diffs"`
	// Line is the first changed line (1-based) of the file as saved, where
	// the card points the editor's follow-along; 0 when nothing changed.
	Line int `json:"line,omitempty"`
	// Reformatted describes how the editor changed the text while saving
	// it (format on save), for the model; empty when it saved what it got.
	Reformatted string `json:"reformatted,omitempty"`
	// Matched says how a tolerant edit matched old_string ("matched
	// ignoring indentation"); empty for an exact match.
	Matched string `json:"matched,omitempty"`
	// Undo is what a rewind needs to take the change back (diffs.Undo);
	// it is logged with the result's display data, not shown to a program.
	Undo diffs.Undo `json:"-"`
}

// changeMeta is the display data of a mutation: the applied hunks and the
// line they start at.
func changeMeta(out changeOut) any {
	return struct {
		Created bool                `json:"created,omitempty"`
		Diffs   []registry.FileDiff `json:"diffs"`
		Line    int                 `json:"line,omitempty"`
		Matched string              `json:"matched,omitempty"`
		Undo    *diffs.Undo         `json:"undo,omitempty"`
	}{out.Created, out.Diffs, out.Line, out.Matched, undoOf(out)}
}

// undoOf is out's Undo, nil for a preview or a call that changed nothing.
func undoOf(out changeOut) *diffs.Undo {
	if out.Undo.After == "" {
		return nil
	}
	return &out.Undo
}

// changeCard shows the applied hunks stored with the result, pointing at
// the first changed line. A failed call has none and shows its error text
// instead. Without a line (nothing changed, an old log) the card carries no
// location: the call's stands, and an update with a bare path would move
// the editor's follow position back to the top of the file.
func changeCard(title, path string, r registry.Result) registry.View {
	if r.IsError {
		return nil
	}
	var m struct {
		Diffs   []registry.FileDiff `json:"diffs"`
		Line    int                 `json:"line"`
		Matched string              `json:"matched"`
	}
	if json.Unmarshal(r.Meta, &m) != nil {
		return nil
	}
	if m.Matched != "" {
		title += " (" + m.Matched + ")" // a tolerant match says so where the user looks
	}
	card := registry.DiffCard{Title: title, Diffs: m.Diffs}
	if m.Line > 0 {
		card.Locations = []registry.Location{{Path: path, Line: m.Line}}
	}
	return card
}

// withNote appends the reformatting note, if any, to a mutation's text.
func withNote(text string, out changeOut) []registry.Content {
	if out.Reformatted != "" {
		text += "\n\n" + out.Reformatted
	}
	return []registry.Content{registry.Text(text)}
}

// firstChangedLine is the 1-based line of after where it first differs
// from before (nil: a new file, line 1); 0 when the texts are the same.
// Line endings and a byte order mark are compared as the diff card shows
// them (normalized), so an editor that answers with LF for a CRLF file does
// not make line 1 look changed.
func firstChangedLine(before *string, after string) int {
	a := normalizeText(after)
	if before == nil {
		return 1
	}
	b := normalizeText(*before)
	if a == b {
		return 0
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return strings.Count(a[:i], "\n") + 1
}

func normalizeText(s string) string {
	return strings.ReplaceAll(strings.TrimPrefix(s, "\uFEFF"), "\r\n", "\n")
}

// Bounds of the reformatting note the model reads.
const (
	noteMaxLines = 40
	noteMaxBytes = 4 << 10
)

// reformatNote tells the model that the editor saved something other than
// what it sent, and how the saved text differs, so its next edit matches
// the file (the session has already recorded the saved text). "" when the
// two are the same but for line endings and a byte order mark.
func reformatNote(path, sent, saved string) string {
	if sent == saved || normalizeText(sent) == normalizeText(saved) {
		return ""
	}
	hunks := diffs.Compute(path, &sent, saved)
	if len(hunks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Note: the editor changed the file as it saved it (format on save); the file now differs from what you wrote. " +
		"Base further edits on the saved text:\n")
	lines, cut := 0, false
	for _, h := range hunks {
		old := ""
		if h.OldText != nil {
			old = *h.OldText
		}
		minus, plus := changedLines(old, h.NewText)
		for _, l := range append(prefixed("-", minus), prefixed("+", plus)...) {
			if lines >= noteMaxLines || b.Len()+len(l) > noteMaxBytes {
				cut = true
				break
			}
			b.WriteString(l)
			lines++
		}
		if cut {
			break
		}
	}
	if cut {
		b.WriteString("(more changes not shown: read the file to see them all)\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// changedLines drops the context lines a hunk shares at both ends.
func changedLines(old, new string) (minus, plus []string) {
	o, n := splitKeep(old), splitKeep(new)
	for len(o) > 0 && len(n) > 0 && o[0] == n[0] {
		o, n = o[1:], n[1:]
	}
	for len(o) > 0 && len(n) > 0 && o[len(o)-1] == n[len(n)-1] {
		o, n = o[:len(o)-1], n[:len(n)-1]
	}
	return o, n
}

func splitKeep(s string) []string {
	if s == "" {
		return nil
	}
	return strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
}

func prefixed(mark string, lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, fmt.Sprintf("%s %s\n", mark, strings.TrimRight(l, "\n")))
	}
	return out
}
