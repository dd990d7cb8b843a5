package match

import (
	"fmt"
	"unicode/utf8"
)

// The block-anchor step (opencode's BlockAnchorReplacer measures a drifted
// middle the same way: the mean, over the lines between the anchors, of
// one minus the Levenshtein distance over the longer line's length). It
// lands a block whose first and last lines are old's and whose middle
// drifted only when the middle is close: opencode accepts a single
// candidate whatever its middle (a threshold of 0), which its own tracker
// blames for wrong edits; here the lines between must be alike on average
// and each one recognisably the same line.
const (
	anchorMeanAlike = 0.8 // the mean likeness of the lines between
	anchorLineAlike = 0.7 // the least likeness of any one of them
	// anchorWork bounds the comparisons (in rune pairs) one edit may
	// spend measuring: past it, the middle is not measured and the edit
	// is refused as not found.
	anchorWork = 1 << 24
)

// anchored is a block whose first and last lines are old's: its 0-based
// first line, its length and how alike its middle is to old's.
type anchored struct {
	start, size int
	mean, least float64
	measured    bool
}

func (a *anchored) close() bool {
	return a.measured && a.mean >= anchorMeanAlike && a.least >= anchorLineAlike
}

// blockAnchor is the last step: old of three lines or more whose first and
// last lines (ignoring indentation) are, at old's length apart, in one
// place of the file (or in several, one of them starting at line at). It
// lands when the lines between are close to old's; otherwise it returns
// the block found, for the refusal to say how far its middle is.
func (f *file) blockAnchor(path, old, new string, rep Repair, at int) (Result, *anchored, error) {
	ol, ot := toLines(old)
	if len(ol) < 3 || blank(ol[0]) || blank(ol[len(ol)-1]) {
		return Result{}, nil, nil
	}
	lines := f.normalized(Indentation)
	first, last := normalize(ol[0], Indentation), normalize(ol[len(ol)-1], Indentation)
	var starts []int
	for i := 0; i+len(ol) <= len(lines); i++ {
		if lines[i] == first && lines[i+len(ol)-1] == last {
			starts = append(starts, i)
		}
	}
	switch {
	case len(starts) == 0:
		return Result{}, nil, nil
	case len(starts) > 1:
		i, ok := pick(starts, at)
		if !ok {
			// Anchors that are not unique anchor nothing; where the
			// middle is close at some of them, the model is told where,
			// to name one with start_line.
			var close []int
			for _, s := range starts[:min(len(starts), maxListed)] {
				a := &anchored{start: s, size: len(ol)}
				a.measure(ol[1:len(ol)-1], f.text[s+1:s+len(ol)-1])
				if a.close() {
					close = append(close, s)
				}
			}
			if len(close) == 0 {
				return Result{}, nil, nil
			}
			return Result{}, nil, ambiguous(path, close, len(ol), Result{Tolerance: BlockAnchor, Repair: rep}, at)
		}
		starts = starts[i : i+1]
	}
	a := &anchored{start: starts[0], size: len(ol)}
	a.measure(ol[1:len(ol)-1], f.text[a.start+1:a.start+len(ol)-1])
	if !a.close() {
		return Result{}, a, nil
	}
	nl, nt := toLines(new)
	r := Result{Tolerance: BlockAnchor, Repair: rep, Alike: a.mean, Lines: []int{a.start + 1}}
	r.Edits = append(r.Edits, f.replacement(a.start, ol, ot, nl, nt, BlockAnchor))
	return r, nil, nil
}

// measure sets how alike the model's middle lines are to the file's,
// compared as the punctuation step compares lines.
func (a *anchored) measure(model, file []string) {
	work := 0
	for i := range model {
		work += utf8.RuneCountInString(model[i]) * utf8.RuneCountInString(file[i])
	}
	if work > anchorWork {
		return
	}
	a.measured, a.mean, a.least = true, 0, 1
	for i := range model {
		s := likeLevenshtein(normalize(model[i], Punctuation), normalize(file[i], Punctuation))
		a.mean += s / float64(len(model))
		a.least = min(a.least, s)
	}
}

// why says, for a refusal, how the block found differs.
func (a *anchored) why() string {
	if !a.measured {
		return fmt.Sprintf("Its first and last lines match lines %d and %d, but the lines between are too long to compare.", a.start+1, a.start+a.size)
	}
	return fmt.Sprintf("Its first and last lines match lines %d and %d, but the lines between are %.0f%% alike (the least %.0f%%): "+
		"an edit lands on its first and last lines only when the lines between are %.0f%% alike and none under %.0f%%.",
		a.start+1, a.start+a.size, 100*a.mean, 100*a.least, 100*anchorMeanAlike, 100*anchorLineAlike)
}

// likeLevenshtein is 1 - distance/longer length, in runes; two empty lines
// are alike.
func likeLevenshtein(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	n := max(len(ra), len(rb))
	if n == 0 {
		return 1
	}
	return 1 - float64(levenshtein(ra, rb))/float64(n)
}

// levenshtein is the edit distance between a and b (insertions, deletions
// and substitutions of one rune each), in one row of memory.
func levenshtein(a, b []rune) int {
	if len(a) < len(b) {
		a, b = b, a
	}
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		diag := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			next := min(row[j]+1, row[j-1]+1, diag+cost)
			diag, row[j] = row[j], next
		}
	}
	return row[len(b)]
}

// blockNote is the tolerance note of a block-anchor match.
func blockNote(alike float64) string {
	return fmt.Sprintf("on its first and last lines only, the lines between them %.0f%% alike the file's", 100*alike)
}
