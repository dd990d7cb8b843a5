package diffs

import "strings"

// The appliers are test oracles: a hunk or edit list must reproduce the new
// text. The package itself only describes changes, it never makes them.

// Apply returns old with the edits applied. Edits may come in any order;
// they must lie inside old and must not overlap (two insertions at the same
// offset go in the order given).
func Apply(old string, edits []Edit) (string, error) {
	es, err := sortedEdits(old, edits)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	pos := 0
	for _, e := range es {
		b.WriteString(old[pos:e.Start])
		b.WriteString(e.New)
		pos = e.End
	}
	b.WriteString(old[pos:])
	return b.String(), nil
}

// apply splices ascending, non-overlapping hunks into base.
func apply(base string, hs []hunk) string {
	var b strings.Builder
	pos := 0
	for _, h := range hs {
		b.WriteString(base[pos:h.Off])
		b.WriteString(h.New)
		pos = h.Off + len(h.Old)
	}
	b.WriteString(base[pos:])
	return b.String()
}
