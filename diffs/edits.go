package diffs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/acp-bridge/acp-bridge/registry"
)

// Edit is one known replacement: old[Start:End] became New (byte offsets
// into the old text, as stored: CRLF and BOM included).
type Edit struct {
	Start, End int
	New        string
}

// FromEdits returns the hunks of known replacements without diffing the
// whole file: only the lines an edit touches and their context are looked
// at, so the cost does not grow with the file. Hunks follow the rules of
// the package doc, like Compute's. Edits outside old or overlapping give
// no hunks.
func FromEdits(path, old string, edits []Edit) []registry.FileDiff {
	hs, err := editHunks(old, edits)
	if err != nil {
		return nil
	}
	out := hs[:0]
	for _, h := range hs {
		atStart := h.Off == 0
		h.Old, h.New = normalizeAt(h.Old, atStart), normalizeAt(h.New, atStart)
		if h.Old != h.New { // a change of line endings only shows nothing
			out = append(out, h)
		}
	}
	return toFileDiffs(path, out)
}

// normalizeAt normalizes a piece of a file; only a piece that starts the
// file can carry the byte order mark.
func normalizeAt(s string, fileStart bool) string {
	if fileStart {
		return normalize(s)
	}
	// Pieces are whole lines, so no CRLF is split at their edges.
	return strings.ReplaceAll(s, "\r\n", "\n")
}

func sortedEdits(old string, edits []Edit) ([]Edit, error) {
	es := slices.Clone(edits)
	// Zero-width insertions sort before a replacement starting at the same
	// offset; equal edits keep the caller's order.
	slices.SortStableFunc(es, func(a, b Edit) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End))
	})
	prev := 0
	for i, e := range es {
		if e.Start < 0 || e.End < e.Start || e.End > len(old) {
			return nil, fmt.Errorf("diffs: edit %d [%d,%d) is outside the text (%d bytes)", i, e.Start, e.End, len(old))
		}
		if e.Start < prev {
			return nil, fmt.Errorf("diffs: edit [%d,%d) overlaps the edit before it (which ends at %d)", e.Start, e.End, prev)
		}
		prev = e.End
	}
	return es, nil
}

// region is a run of whole old lines, old[start:end], and the whole lines
// that replace it.
type region struct {
	start, end int
	new        string
}

// editHunks turns edits into hunks over the raw old text.
func editHunks(old string, edits []Edit) ([]hunk, error) {
	es, err := sortedEdits(old, edits)
	if err != nil {
		return nil, err
	}
	var regions []region
	for i := 0; i < len(es); {
		// Widen the edit to whole lines; edits that share a line share a region.
		start := lineStart(old, es[i].Start)
		var nb strings.Builder
		pos := start
		end := 0
		for {
			e := es[i]
			nb.WriteString(old[pos:e.Start])
			nb.WriteString(e.New)
			pos = e.End
			end = regionEnd(old, pos, nb.String())
			i++
			// The next edit joins this region when its line starts inside it
			// (an insertion at the very end of a file without a final
			// newline starts on the region's last line).
			if i == len(es) || lineStart(old, es[i].Start) >= end {
				break
			}
		}
		nb.WriteString(old[pos:end])
		if n := len(regions); n > 0 && regions[n-1].end == start {
			// Touching regions are one change: apart, an insertion and a
			// deletion that cancel out would each look like an edit.
			regions[n-1].end, regions[n-1].new = end, regions[n-1].new+nb.String()
			continue
		}
		regions = append(regions, region{start, end, nb.String()})
	}
	kept := regions[:0]
	for _, r := range regions {
		if r, changed := trimRegion(old, r); changed {
			kept = append(kept, r)
		}
	}
	return regionHunks(old, kept), nil
}

// lineStart is the offset of the line holding offset i.
func lineStart(s string, i int) int { return strings.LastIndexByte(s[:i], '\n') + 1 }

// lineEnd is the offset just past the line holding offset i (past its '\n').
func lineEnd(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(s)
}

// regionEnd is where a region whose edits end at pos must end so that both
// sides are whole lines: at pos itself when pos starts a line and the new
// side so far ends a line too, else at the end of pos's line.
func regionEnd(old string, pos int, newSoFar string) int {
	if pos == len(old) {
		return pos
	}
	if (pos == 0 || old[pos-1] == '\n') && (newSoFar == "" || newSoFar[len(newSoFar)-1] == '\n') {
		return pos
	}
	return lineEnd(old, pos)
}

// trimRegion drops leading and trailing lines that the edit left as they
// were (an edit's old_string often carries unchanged lines for anchoring).
// changed is false when nothing is left.
func trimRegion(old string, r region) (region, bool) {
	o, n := old[r.start:r.end], r.new
	for o != "" && n != "" {
		lo, ln := firstLine(o), firstLine(n)
		if lo != ln {
			break
		}
		o, n = o[len(lo):], n[len(ln):]
		r.start += len(lo)
	}
	for o != "" && n != "" {
		lo, ln := lastLine(o), lastLine(n)
		if lo != ln {
			break
		}
		o, n = o[:len(o)-len(lo)], n[:len(n)-len(ln)]
		r.end -= len(lo)
	}
	r.new = n
	return r, o != n
}

func firstLine(s string) string { return s[:lineEnd(s, 0)] }

func lastLine(s string) string { return s[lineStart(s, len(s)-1):] }

// regionHunks groups regions (ascending, apart) into hunks with context,
// counting lines only in the gaps between regions and in the context.
func regionHunks(old string, rs []region) []hunk {
	var out []hunk
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && linesUpTo(old[rs[j].end:rs[j+1].start], MergeGap+1) <= MergeGap {
			j++
		}
		from := rs[i].start
		for k := 0; k < Context && from > 0; k++ {
			from = lineStart(old, from-1)
		}
		to := rs[j].end
		for k := 0; k < Context && to < len(old); k++ {
			to = lineEnd(old, to)
		}
		var nb strings.Builder
		nb.WriteString(old[from:rs[i].start])
		for k := i; k <= j; k++ {
			if k > i {
				nb.WriteString(old[rs[k-1].end:rs[k].start])
			}
			nb.WriteString(rs[k].new)
		}
		nb.WriteString(old[rs[j].end:to])
		// Changes far apart in one hunk can still cancel out (a line
		// deleted here and the same line inserted a few lines on).
		if h := (hunk{Off: from, Old: old[from:to], New: nb.String()}); h.Old != h.New {
			out = append(out, h)
		}
		i = j + 1
	}
	return out
}

// linesUpTo counts the lines of s (whole lines), stopping at limit.
func linesUpTo(s string, limit int) int {
	n := 0
	for n < limit {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			if s != "" {
				n++
			}
			return n
		}
		n++
		s = s[i+1:]
	}
	return n
}
