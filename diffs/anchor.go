package diffs

// Whole-file diffs of large files spend their time numbering lines and in
// Myers' search, both proportional to the lines handed to go-diff. Most of
// a large file is untouched, in long runs of lines that are equal and in
// the same order on both sides. unanchored finds those runs with plain
// string compares and hands go-diff only what lies between them, so the
// cost follows the size of the change rather than the size of the file.
// The result is still an exact diff (the fuzz test applies it); only the
// alignment of long equal runs is fixed in advance, as any line diff would
// align them.

const (
	// anchorRun is how many equal lines in a row make an anchor.
	anchorRun = 16
	// resyncReach bounds how far past a difference (in lines, both sides
	// together) an anchor is looked for; beyond it, the rest of the file
	// goes to go-diff whole.
	resyncReach = 1024
)

// piece is a stretch that go-diff must diff: al[a0:a1] against bl[b0:b1].
type piece struct{ a0, a1, b0, b1 int }

// unanchored returns the stretches between anchors, in order.
func unanchored(al, bl []string) []piece {
	var out []piece
	i, j := 0, 0
	pi, pj := 0, 0 // where the current piece starts
	for i < len(al) && j < len(bl) {
		if isAnchor(al, bl, i, j) {
			if pi < i || pj < j {
				out = append(out, piece{pi, i, pj, j})
			}
			for i < len(al) && j < len(bl) && al[i] == bl[j] {
				i, j = i+1, j+1
			}
			pi, pj = i, j
			continue
		}
		ni, nj, ok := nextAnchor(al, bl, i, j)
		if !ok {
			break
		}
		i, j = ni, nj
	}
	if pi < len(al) || pj < len(bl) {
		out = append(out, piece{pi, len(al), pj, len(bl)})
	}
	return out
}

// isAnchor reports whether anchorRun equal lines start at al[i], bl[j]
// (or equal lines run to the end of either side).
func isAnchor(al, bl []string, i, j int) bool {
	for k := 0; k < anchorRun; k++ {
		if i+k == len(al) || j+k == len(bl) {
			return k > 0
		}
		if al[i+k] != bl[j+k] {
			return false
		}
	}
	return true
}

// nextAnchor looks for the anchor nearest to (i, j), nearest meaning the
// fewest lines skipped on both sides together.
func nextAnchor(al, bl []string, i, j int) (int, int, bool) {
	restA, restB := len(al)-1-i, len(bl)-1-j // the farthest steps that stay inside each side
	for s := 1; s <= min(resyncReach, restA+restB); s++ {
		for di := max(0, s-restB); di <= min(s, restA); di++ {
			ai, bj := i+di, j+s-di
			if al[ai] == bl[bj] && isAnchor(al, bl, ai, bj) {
				return ai, bj, true
			}
		}
	}
	return 0, 0, false
}
