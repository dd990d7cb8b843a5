// Package match finds where an edit's old_string is in a file and shapes
// its new_string for the place found. It is the edit tool's one matcher:
// the edit itself and anything that previews an edit (a pending diff, a
// permission prompt) use it, so what is shown is what would be applied.
//
// Matching is a cascade from strict to tolerant. Each step is tried only
// when the stricter ones found nothing, and each accepts only a unique
// match: two places that match equally well are refused, never guessed.
// The steps, in order, were chosen from the peers' matchers (codex's
// apply_patch seek_sequence, opencode's edit replacers, Roo Code's
// multi-search-replace, aider's search/replace):
//
//  1. exact, with the line endings of old_string and new_string taken as
//     the file's (a model writes "\n"; a CRLF file keeps CRLF, and an LF
//     file never gets a CRLF from new_string);
//  2. line by line, ignoring trailing whitespace (codex);
//  3. line by line, ignoring indentation (codex, opencode, Roo, aider);
//  4. line by line, ignoring runs of whitespace inside lines (opencode);
//  5. line by line, with typographic dashes, quotes and spaces read as
//     ASCII (codex);
//  6. for a one-line old_string, inside a line, ignoring whitespace runs
//     and typographic punctuation (opencode);
//
// and then the same ladder again on old_string repaired in one way the
// peers' tests show models get wrong: line-number prefixes copied from a
// read ("12: ", "12 | ", "| "), escapes applied once too often ("\n",
// "\'", "\$", "\\" written literally), blank lines at its ends.
//
// Refused, with the reason: anchoring on the first and last lines and
// accepting whatever middle the file has (opencode's BlockAnchor and
// ContextAware replacers; its own tracker blames them for wrong edits), and
// similarity thresholds (Roo's fuzzy mode): a middle that drifted means the
// model's picture of the file is wrong, and the edit it meant cannot be
// known. Such an edit is refused with the nearest region of the file, its
// line numbers and what differs, so the next try is right.
//
// A tolerant match adapts the replacement to the file: lines new_string
// keeps from old_string are written as the file has them (indentation,
// trailing spaces, quotes and all); changed and added lines get the file's
// indentation (tabs or spaces, and its depth), and where the model
// normalised quotes, the file's quotes.
package match

import (
	"fmt"
	"strings"

	"github.com/acp-bridge/acp-bridge/diffs"
)

// Tolerance names how a match was found. Exact is the zero value.
type Tolerance int

const (
	Exact Tolerance = iota
	TrailingSpace
	Indentation
	InnerSpace
	Punctuation
)

// Repair names how old_string was repaired before it matched.
type Repair int

const (
	NoRepair Repair = iota
	LineNumbers
	Escapes
	BlankEnds
)

// Result is a unique match and the edits that apply it.
type Result struct {
	// Edits are ascending, non-overlapping replacements in content's bytes.
	Edits     []diffs.Edit
	Tolerance Tolerance
	Repair    Repair
	// Lines are the 1-based first lines of the matched regions.
	Lines []int
	// Inline: a one-line old_string matched inside a line; otherwise a
	// tolerant match replaces whole lines.
	Inline bool
}

// Tolerant reports whether anything but an exact match was needed.
func (r Result) Tolerant() bool { return r.Tolerance != Exact || r.Repair != NoRepair }

// Note says how old_string was matched, for the model and the card: ""
// for an exact match, else a phrase like "matched ignoring indentation".
func (r Result) Note() string {
	if !r.Tolerant() {
		return ""
	}
	var parts []string
	switch r.Repair {
	case LineNumbers:
		parts = append(parts, "without the line-number prefixes")
	case Escapes:
		parts = append(parts, "with its escapes undone")
	case BlankEnds:
		parts = append(parts, "without the blank lines at its ends")
	}
	switch r.Tolerance {
	case TrailingSpace:
		parts = append(parts, "ignoring trailing whitespace")
	case Indentation:
		parts = append(parts, "ignoring indentation")
	case InnerSpace:
		parts = append(parts, "ignoring whitespace")
	case Punctuation:
		parts = append(parts, "with typographic punctuation read as ASCII")
	}
	return "matched " + strings.Join(parts, " and ")
}

// Refusal codes, as the edit tool reports them.
const (
	CodeNotFound  = "FS_EDIT_NOT_FOUND"
	CodeAmbiguous = "FS_AMBIGUOUS_EDIT"
)

// Refusal is a failed match: the code and a message for the model.
type Refusal struct {
	Code    string
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Find locates old in content and returns the edits that replace it with
// new, adapted to the file. With all, every match of the first step that
// finds any is replaced; without, a step that finds more than one refuses.
// path only names the file in messages. A failure is a *Refusal.
func Find(path, content, old, new string, all bool) (Result, error) {
	r, err := find(path, content, old, new, all)
	if err == nil {
		keepFinalNewline(content, r.Edits)
	}
	return r, err
}

// Apply performs edits as Find returns them (ascending, not overlapping)
// on content: the file as the edit leaves it. The edit tool and every test
// of the matcher apply a match this one way.
func Apply(content string, edits []diffs.Edit) string {
	var b strings.Builder
	b.Grow(len(content))
	prev := 0
	for _, e := range edits {
		b.WriteString(content[prev:e.Start])
		b.WriteString(e.New)
		prev = e.End
	}
	b.WriteString(content[prev:])
	return b.String()
}

// keepFinalNewline puts back whether the file ends with a line break:
// only an edit that reaches the end of the file can change it.
func keepFinalNewline(content string, edits []diffs.Edit) {
	last := &edits[len(edits)-1]
	if last.End != len(content) {
		return
	}
	hadNL := strings.HasSuffix(content, "\n")
	switch hasNL := strings.HasSuffix(last.New, "\n"); {
	case hadNL && !hasNL && (last.New != "" || last.Start > 0 && content[last.Start-1] != '\n'):
		last.New += lineEnding(content)
	case !hadNL && hasNL:
		last.New = strings.TrimSuffix(strings.TrimSuffix(last.New, "\n"), "\r")
	}
}

func find(path, content, old, new string, all bool) (Result, error) {
	if r, ok, err := exact(path, content, old, new, all); ok || err != nil {
		return r, err
	}
	f := splitFile(content)
	for _, rep := range []Repair{NoRepair, LineNumbers, Escapes, BlankEnds} {
		o, n, ok := repair(rep, old, new)
		if !ok {
			continue
		}
		if rep != NoRepair {
			if r, ok, err := exact(path, content, o, n, all); ok || err != nil {
				r.Repair = rep
				return r, relabel(err, rep, Exact)
			}
		}
		ol, ot := toLines(o)
		if strings.TrimSpace(o) == "" {
			continue // only whitespace: nothing a tolerant step could anchor on
		}
		nl, nt := toLines(n)
		for tol := TrailingSpace; tol <= Punctuation; tol++ {
			starts := f.find(ol, tol)
			if len(starts) == 0 {
				continue
			}
			if len(starts) > 1 && !all {
				return Result{}, ambiguous(path, len(starts), starts, len(ol), Result{Tolerance: tol, Repair: rep})
			}
			r := Result{Tolerance: tol, Repair: rep}
			for _, s := range starts {
				r.Edits = append(r.Edits, f.replacement(s, ol, ot, nl, nt, tol))
				r.Lines = append(r.Lines, s+1)
			}
			return r, nil
		}
		if len(ol) == 1 && !ot {
			if r, ok, err := f.inlineMatch(path, o, n, all, rep); ok {
				return r, err
			}
		}
	}
	return Result{}, notFound(path, f, old)
}

// exact is step 1: old as written, its line breaks as the file's. ok is
// false when it found nothing.
func exact(path, content, old, new string, all bool) (Result, bool, error) {
	if old == "" {
		return Result{}, false, nil // an empty string is everywhere
	}
	eol := lineEnding(content)
	o, n := withEnding(old, eol), withEnding(new, eol)
	if !strings.Contains(content, o) && strings.Contains(content, old) {
		o = old // a mixed file where the text really has the other ending
	}
	count := strings.Count(content, o)
	switch {
	case count == 0:
		return Result{}, false, nil
	case count > 1 && !all:
		return Result{}, true, &Refusal{CodeAmbiguous, fmt.Sprintf("old_string matched %d times in %q; provide a more specific old_string or set replace_all to true", count, path)}
	}
	r := Result{Edits: make([]diffs.Edit, 0, count)}
	for i := 0; ; {
		j := strings.Index(content[i:], o)
		if j < 0 {
			break
		}
		start := i + j
		r.Edits = append(r.Edits, diffs.Edit{Start: start, End: start + len(o), New: n})
		r.Lines = append(r.Lines, strings.Count(content[:start], "\n")+1)
		i = start + len(o)
	}
	return r, true, nil
}

// relabel gives an ambiguity found after a repair the repair's words.
func relabel(err error, rep Repair, tol Tolerance) error {
	if ref, ok := err.(*Refusal); ok && ref.Code == CodeAmbiguous && rep != NoRepair {
		return &Refusal{ref.Code, strings.Replace(ref.Message, "old_string matched", "old_string "+Result{Tolerance: tol, Repair: rep}.Note()+",", 1)}
	}
	return err
}

// lineEnding is the file's dominant line break.
func lineEnding(s string) string {
	crlf := strings.Count(s, "\r\n")
	if crlf > 0 && crlf >= strings.Count(s, "\n")-crlf {
		return "\r\n"
	}
	return "\n"
}

// withEnding writes every line break of s as eol.
func withEnding(s, eol string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if eol == "\n" {
		return s
	}
	return strings.ReplaceAll(s, "\n", eol)
}

// toLines splits text into lines without their breaks; trailing reports
// whether it ended with a line break (not counted as an empty last line).
func toLines(s string) (lines []string, trailing bool) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if s == "" {
		return nil, false
	}
	trailing = strings.HasSuffix(s, "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n"), trailing
}

// inlineMatch is the last try for a one-line old: inside a line, ignoring
// whitespace runs and typographic punctuation. ok is false when it found
// nothing.
func (f *file) inlineMatch(path, old, new string, all bool, rep Repair) (Result, bool, error) {
	spans, tol := f.inline(old)
	r := Result{Tolerance: tol, Repair: rep, Inline: true}
	switch {
	case len(spans) == 0:
		return r, false, nil
	case len(spans) > 1 && !all:
		starts := make([]int, len(spans))
		for i, s := range spans {
			starts[i] = strings.Count(f.content[:s[0]], "\n")
		}
		return Result{}, true, ambiguous(path, len(spans), starts, 1, r)
	}
	n := withEnding(new, lineEnding(f.content))
	for _, s := range spans {
		got := f.content[s[0]:s[1]]
		nn := n
		if tol == Punctuation {
			nn = punctLike(n, []string{old}, []string{got})
		}
		r.Edits = append(r.Edits, diffs.Edit{Start: s[0], End: s[1], New: nn})
		r.Lines = append(r.Lines, strings.Count(f.content[:s[0]], "\n")+1)
	}
	return r, true, nil
}
