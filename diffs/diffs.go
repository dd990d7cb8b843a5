// Package diffs computes the hunks a file change actually applied, for diff
// cards. Tools call it at execution time and store the hunks in their result,
// so the mapping (and a replay) needs no I/O. It is a leaf: it imports only
// registry (for FileDiff) and github.com/sergi/go-diff.
//
// What a hunk looks like:
//   - Each hunk is the changed lines plus up to Context unchanged lines on
//     each side; changes separated by MergeGap or fewer unchanged lines share
//     one hunk. Hunks come in file order and carry no line numbers: the editor
//     places them by their content.
//   - OldText and NewText are exact runs of whole lines, terminators
//     included. So a change that only adds or removes the final newline gives
//     a hunk whose two sides differ ("b" against "b\n"), never a hunk that
//     looks empty.
//   - Texts are shown normalized: CRLF becomes LF and a leading byte order
//     mark is dropped, on both sides, before anything is compared. A CRLF
//     file rewritten with LF, or a BOM added or removed, therefore never
//     makes every line differ; a change that is nothing but line endings or
//     a BOM has no hunks at all.
//   - OldText is nil when the old side has no lines: a new file, or content
//     put into an empty one.
//
// How: Compute numbers lines (each distinct line one rune) and runs go-diff's
// Myers search in line mode, but only over the stretches between long
// unchanged runs (anchor.go) and only on the lines both sides share, so a
// few edits in a large file cost little more than reading it, and a
// rewritten file costs no search at all. Above MaxDiffSize per side the
// change is one whole-file hunk; past go-diff's time bound (pathological
// input) the hunks stay exact but coarser. FromEdits never diffs: it widens
// known replacements to whole lines and adds context.
package diffs

import (
	"hash/maphash"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/acp-bridge/acp-bridge/registry"
)

const (
	// Context is the number of unchanged lines shown around a change.
	Context = 3
	// MergeGap: changes separated by at most this many unchanged lines share a hunk.
	MergeGap = 2 * Context
	// MaxDiffSize: when either side is larger than this many bytes, the
	// change is shown as one whole-file diff instead of hunks.
	MaxDiffSize = 10 << 20
	// diffTimeout bounds go-diff's search on pathological inputs (thousands
	// of changes with no long unchanged run between them); past it the diff
	// is still exact, only coarser. It is go-diff's own default.
	diffTimeout = time.Second
)

// Compute returns the hunks that turn old into new. old == nil means a new
// file: one diff with a nil OldText and the whole content. Identical texts
// (after normalization) give no hunks.
func Compute(path string, old *string, new string) []registry.FileDiff {
	n := normalize(new)
	if old == nil {
		return []registry.FileDiff{{Path: path, OldText: nil, NewText: n}}
	}
	o := normalize(*old)
	return toFileDiffs(path, computeHunks(o, n))
}

// hunk is one replacement of the old text: at byte offset Off, Old (whole
// lines, context included) became New. Off lets tests apply hunks exactly;
// the wire form drops it.
type hunk struct {
	Off      int
	Old, New string
}

func toFileDiffs(path string, hs []hunk) []registry.FileDiff {
	if len(hs) == 0 {
		return nil
	}
	out := make([]registry.FileDiff, 0, len(hs))
	for _, h := range hs {
		d := registry.FileDiff{Path: path, NewText: h.New}
		if h.Old != "" {
			o := h.Old
			d.OldText = &o
		}
		out = append(out, d)
	}
	return out
}

// normalize is the form texts are compared and shown in: LF line endings
// and no byte order mark. A lone CR (old Mac endings) is left alone.
func normalize(s string) string {
	s = strings.TrimPrefix(s, bom)
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\r\n", "\n")
}

const bom = "\uFEFF"

// computeHunks diffs two normalized texts line by line: go-diff on lines
// (each distinct line one rune), over the stretches between long unchanged
// runs (see anchor.go).
func computeHunks(a, b string) []hunk {
	if a == b {
		return nil
	}
	if len(a) > MaxDiffSize || len(b) > MaxDiffSize {
		return []hunk{{Off: 0, Old: a, New: b}}
	}
	al, bl := splitLines(a), splitLines(b)
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = diffTimeout
	var changes []change
	for _, p := range unanchored(al, bl) {
		ra, rb, ok := lineRunes(al[p.a0:p.a1], bl[p.b0:p.b1])
		if !ok {
			return []hunk{{Off: 0, Old: a, New: b}}
		}
		// Lines found on one side only can never match: go-diff gets the
		// lines both sides share (a rewritten file leaves it nothing to
		// search), and the dropped lines fall into the gaps between matches.
		ka, kb := shared(ra, rb), shared(rb, ra)
		fa, fb := pick(ra, ka), pick(rb, kb)
		nextA, nextB := p.a0, p.b0 // the first old and new lines not yet accounted for
		fi, fj := 0, 0
		for _, d := range dmp.DiffMainRunes(fa, fb, false) {
			// Every rune stands for one line, so the rune count is the line count.
			n := utf8.RuneCountInString(d.Text)
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				for k := range n {
					ai, bi := p.a0+ka[fi+k], p.b0+kb[fj+k]
					if ai > nextA || bi > nextB {
						changes = append(changes, change{oldStart: nextA, oldEnd: ai, newStart: nextB, newEnd: bi})
					}
					nextA, nextB = ai+1, bi+1
				}
				fi, fj = fi+n, fj+n
			case diffmatchpatch.DiffDelete:
				fi += n
			case diffmatchpatch.DiffInsert:
				fj += n
			}
		}
		if nextA < p.a1 || nextB < p.b1 {
			changes = append(changes, change{oldStart: nextA, oldEnd: p.a1, newStart: nextB, newEnd: p.b1})
		}
	}
	return lineHunks(al, bl, changes)
}

// change is a changed line range: old[oldStart:oldEnd] became new[newStart:newEnd].
type change struct{ oldStart, oldEnd, newStart, newEnd int }

// shared returns the indexes of the runes of x that also occur in y.
// Runes from lineRunes are numbered densely, so a slice indexes them.
func shared(x, y []rune) []int {
	in := make([]bool, len(x)+len(y))
	for _, r := range y {
		in[index(r)] = true
	}
	out := make([]int, 0, len(x))
	for i, r := range x {
		if in[index(r)] {
			out = append(out, i)
		}
	}
	return out
}

func pick(rs []rune, idx []int) []rune {
	out := make([]rune, len(idx))
	for i, j := range idx {
		out[i] = rs[j]
	}
	return out
}

// lineHunks groups ascending changes into hunks with context.
func lineHunks(al, bl []string, changes []change) []hunk {
	var out []hunk
	off, line := 0, 0 // byte offset of al[line] in the old text
	for i := 0; i < len(changes); {
		j := i
		for j+1 < len(changes) && changes[j+1].oldStart-changes[j].oldEnd <= MergeGap {
			j++
		}
		first, last := changes[i], changes[j]
		before := min(Context, first.oldStart)
		after := min(Context, len(al)-last.oldEnd)
		os, oe := first.oldStart-before, last.oldEnd+after
		ns, ne := first.newStart-before, last.newEnd+after
		for ; line < os; line++ {
			off += len(al[line])
		}
		out = append(out, hunk{Off: off, Old: strings.Join(al[os:oe], ""), New: strings.Join(bl[ns:ne], "")})
		i = j + 1
	}
	return out
}

// splitLines splits keeping each line's terminator, so joining is exact.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	n := strings.Count(s, "\n")
	if s[len(s)-1] != '\n' {
		n++
	}
	out := make([]string, 0, n)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// lineRunes gives every distinct line one rune, so go-diff's character diff
// becomes a line diff. Runes skip the surrogate range: go-diff turns runes
// into strings while merging, and a surrogate would become U+FFFD and make
// different lines compare equal. ok is false when there are more distinct
// lines than runes (over a million), and the caller shows the whole file.
//
// This is the hot part of a whole-file diff, so lines are keyed by a 64-bit
// hash (a collision is detected and the line gets its own rune), and a new
// line is first compared with the old line it most likely repeats: in a
// typical edit nearly every line is where it was, and one string compare
// is cheaper than a map lookup.
func lineRunes(al, bl []string) (ra, rb []rune, ok bool) {
	ids := lineIDs{byHash: make(map[uint64]rune, len(al)), seed: maphash.MakeSeed(),
		lines: make([]string, 0, len(al)+len(bl)/8)}
	ra = make([]rune, len(al))
	for i, l := range al {
		if ra[i], ok = ids.id(l); !ok {
			return nil, nil, false
		}
	}
	rb = make([]rune, len(bl))
	k := 0 // the old line the next new line most likely repeats
	for j, l := range bl {
		switch {
		case k < len(al) && al[k] == l:
			rb[j], k = ra[k], k+1
		case k+1 < len(al) && al[k+1] == l: // one old line went
			rb[j], k = ra[k+1], k+2
		default:
			if rb[j], ok = ids.id(l); !ok {
				return nil, nil, false
			}
		}
	}
	return ra, rb, true
}

// lineIDs numbers distinct lines.
type lineIDs struct {
	seed   maphash.Seed
	byHash map[uint64]rune
	exact  map[string]rune // lines whose hash collided with another line's
	lines  []string        // lines[n] is the line of the nth rune handed out
}

func (ids *lineIDs) id(l string) (rune, bool) {
	h := maphash.String(ids.seed, l)
	r, seen := ids.byHash[h]
	if seen && ids.lines[index(r)] == l {
		return r, true
	}
	if seen { // a collision: this line needs its own rune
		if r, ok := ids.exact[l]; ok {
			return r, true
		}
	}
	n := len(ids.lines)
	r = rune(n)
	if r >= surrogateMin {
		r += surrogateMax - surrogateMin + 1
	}
	if r > utf8.MaxRune {
		return 0, false
	}
	ids.lines = append(ids.lines, l)
	if seen {
		if ids.exact == nil {
			ids.exact = map[string]rune{}
		}
		ids.exact[l] = r
	} else {
		ids.byHash[h] = r
	}
	return r, true
}

// index is the inverse of the rune numbering in id.
func index(r rune) int {
	if r > surrogateMax {
		return int(r) - (surrogateMax - surrogateMin + 1)
	}
	return int(r)
}

const (
	surrogateMin = 0xD800
	surrogateMax = 0xDFFF
)
