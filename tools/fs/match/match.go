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
// Last, when every step found nothing: a block whose first and last lines
// are old's (ignoring indentation), at old's length apart, in one place of
// the file, whose lines between drifted only a little (anchor.go: the
// Levenshtein likeness opencode's BlockAnchor replacer measures, but with
// thresholds that refuse a middle that is not close; opencode lands any
// single candidate, and its own tracker blames that for wrong edits). Lines
// new_string keeps from such an old_string stay as the file has them. A
// middle that is not close, a block of another length, anchors found in
// several places, and similarity alone without anchors (Roo's fuzzy mode)
// are refused: the model's picture of the file is wrong, and the edit it
// meant cannot be known. Such an edit is refused with the nearest region of
// the file, its line numbers and what differs, so the next try is right.
//
// Where a step finds several places, the model may name the line the one
// it means starts at (the edit tool's start_line; an old_string copied
// from read with its line-number prefixes names it too); otherwise the
// refusal lists every place by line.
//
// A tolerant match adapts the replacement to the file: lines new_string
// keeps from old_string are written as the file has them (indentation,
// trailing spaces, quotes and all); a changed line gets the file's
// indentation (tabs or spaces, and its depth) at the place of the old line
// it replaces, a line new_string adds gets its neighbour's adjustment (so
// lines the model wrote at one level stay at one level), and where the
// model normalised quotes, the file's quotes.
package match

import (
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
	// BlockAnchor: old's first and last lines matched, and the lines
	// between are close to the file's (anchor.go).
	BlockAnchor
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
	// Alike is how alike the lines between a BlockAnchor match's first
	// and last lines are to old's, 0 to 1.
	Alike float64
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
	case BlockAnchor:
		parts = append(parts, blockNote(r.Alike))
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
	return FindAt(path, content, old, new, all, 0)
}

// FindAt is Find with the line (1-based) where the model says old starts,
// 0 for none: a step that finds more than one match takes the one that
// starts there, and refuses, listing them, when none does. An old copied
// from read with its line-number prefixes names its line the same way.
func FindAt(path, content, old, new string, all bool, at int) (Result, error) {
	r, err := find(path, content, old, new, all, at)
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

func find(path, content, old, new string, all bool, at int) (Result, error) {
	if r, ok, err := exact(path, content, old, new, all, at, NoRepair); ok || err != nil {
		return r, err
	}
	f := splitFile(content)
	repairs := []Repair{NoRepair, LineNumbers, Escapes, BlankEnds}
	for _, rep := range repairs {
		o, n, ok := repair(rep, old, new)
		if !ok {
			continue
		}
		at := repairedAt(rep, old, at)
		if rep != NoRepair {
			if r, ok, err := exact(path, content, o, n, all, at, rep); ok || err != nil {
				r.Repair = rep
				return r, err
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
			how := Result{Tolerance: tol, Repair: rep}
			if len(starts) > 1 && !all {
				i, ok := pick(starts, at)
				if !ok {
					return Result{}, ambiguous(path, starts, len(ol), how, at)
				}
				starts = starts[i : i+1]
			}
			r := how
			for _, s := range starts {
				r.Edits = append(r.Edits, f.replacement(s, ol, ot, nl, nt, tol))
				r.Lines = append(r.Lines, s+1)
			}
			return r, nil
		}
		if len(ol) == 1 && !ot {
			if r, ok, err := f.inlineMatch(path, o, n, all, rep, at); ok {
				return r, err
			}
		}
	}
	// Last, and only when every stricter way found nothing: the block
	// whose first and last lines are old's, when the lines between are
	// close to old's.
	var near *anchored
	for _, rep := range repairs {
		o, n, ok := repair(rep, old, new)
		if !ok {
			continue
		}
		at := repairedAt(rep, old, at)
		r, a, err := f.blockAnchor(path, o, n, rep, at)
		if err != nil || r.Edits != nil {
			return r, err
		}
		if near == nil {
			near = a
		}
	}
	return Result{}, notFound(path, f, old, near)
}

// repairedAt is the line old starts at for a try under rep: the model's,
// else, when rep strips read's line-number prefixes, the line read showed
// old's first line at.
func repairedAt(rep Repair, old string, at int) int {
	if rep == LineNumbers && at == 0 {
		return firstNumber(old)
	}
	return at
}

// pick is the index of the match (by its 0-based first line) that starts
// at line at (1-based); ok is false when at is 0, or when none or more
// than one (inside that line) starts there.
func pick(starts []int, at int) (int, bool) {
	found := -1
	for i, s := range starts {
		if at > 0 && s+1 == at {
			if found >= 0 {
				return 0, false
			}
			found = i
		}
	}
	return found, found >= 0
}

// exact is step 1: old as written, its line breaks as the file's. ok is
// false when it found nothing.
func exact(path, content, old, new string, all bool, at int, rep Repair) (Result, bool, error) {
	if old == "" {
		return Result{}, false, nil // an empty string is everywhere
	}
	eol := lineEnding(content)
	o, n := withEnding(old, eol), withEnding(new, eol)
	if !strings.Contains(content, o) && strings.Contains(content, old) {
		o = old // a mixed file where the text really has the other ending
	}
	count := strings.Count(content, o)
	if count == 0 {
		return Result{}, false, nil
	}
	r := Result{Edits: make([]diffs.Edit, 0, count)}
	line, prev := 1, 0
	for i := 0; ; {
		j := strings.Index(content[i:], o)
		if j < 0 {
			break
		}
		start := i + j
		line += strings.Count(content[prev:start], "\n")
		prev = start
		r.Edits = append(r.Edits, diffs.Edit{Start: start, End: start + len(o), New: n})
		r.Lines = append(r.Lines, line)
		i = start + len(o)
	}
	if count > 1 && !all {
		starts := make([]int, len(r.Lines))
		for i, l := range r.Lines {
			starts[i] = l - 1
		}
		k, ok := pick(starts, at)
		if !ok {
			return Result{}, true, ambiguous(path, starts, 0, Result{Repair: rep}, at)
		}
		r.Edits, r.Lines = r.Edits[k:k+1:k+1], r.Lines[k:k+1:k+1]
	}
	return r, true, nil
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
func (f *file) inlineMatch(path, old, new string, all bool, rep Repair, at int) (Result, bool, error) {
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
		i, ok := pick(starts, at)
		if !ok {
			return Result{}, true, ambiguous(path, starts, 1, r, at)
		}
		spans = spans[i : i+1]
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
