package fs

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// A literal prefilter, the way ripgrep skips lines: from the parsed pattern
// take the sets of literals every match holds one of each of (the pieces
// of a concatenation), scan for the set cheapest to find (a scan for its
// literals' rarest bytes), check the others on each line found, and run
// the regexp only on the lines that pass. Go's regexp is fast only when
// the pattern starts with a literal; this makes "\w+Handler\(" or
// "(?i)todo" as fast as "Handler\(", and "func \w+\(ctx context" as fast
// as "(ctx context".

// lit is one literal of a prefilter.
type lit struct {
	s    []byte
	fold bool // matches ASCII-case-insensitively (only ASCII bytes can anchor it)
	off  int  // offset in s of the byte the scan looks for
}

// litSet is a prefilter: every matching line contains one of lits, and
// one literal of each set in also.
type litSet struct {
	lits    []lit
	anchors []byte // the distinct bytes the scan looks for (both cases of a folded letter)
	// also are the other sets a match needs one literal of each of (the
	// pieces of a concatenation other than the one scanned for): checked
	// on a candidate line before the regexp runs on it.
	also [][]lit
}

// minLiteral is the shortest literal worth a prefilter: single bytes occur
// on most lines, where running the regexp on every line is cheaper.
const minLiteral = 2

// maxAnchors bounds the bytes scanned for at once: past that an
// alternation is better left to the regexp.
const maxAnchors = 8

// literals returns the prefilter for pattern, or nil when it has none
// worth using (the regexp then runs on whole files first, see prefilter).
// Of the sets every match needs one literal of (all the pieces of
// "func \w+\(ctx context\.Context\)", say: "func " and "(ctx
// context.Context)"), the scan looks for the one whose anchor bytes are
// rarest: the scan stops at every anchor byte, and "func " stops it at
// every "f" of the tree. The others are checked on the lines it finds.
func literals(pattern string) *litSet {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	var best *litSet
	var also [][]lit
	for _, set := range requiredSets(re.Simplify()) {
		ls := newLitSet(set)
		if ls == nil {
			continue
		}
		switch {
		case best == nil:
			best = ls
		case ls.cost() < best.cost():
			also = append(also, best.lits)
			best = ls
		default:
			also = append(also, ls.lits)
		}
	}
	if best != nil {
		best.also = also
	}
	return best
}

// newLitSet makes the prefilter of one set, or nil when a literal of it
// is too short or cannot be anchored, or it has too many anchors.
func newLitSet(set []lit) *litSet {
	ls := &litSet{}
	for _, l := range set {
		if len(l.s) < minLiteral {
			return nil
		}
		l.off = rarest(l)
		if l.off < 0 {
			return nil
		}
		ls.lits = append(ls.lits, l)
		b := l.s[l.off]
		for _, c := range []byte{b, caseFlip(b, l.fold)} {
			if bytes.IndexByte(ls.anchors, c) < 0 {
				ls.anchors = append(ls.anchors, c)
			}
		}
	}
	if len(ls.anchors) > maxAnchors {
		return nil
	}
	return ls
}

// cost estimates the work of scanning for ls, per 100,000 bytes of
// source: a stop at each anchor byte (their frequencies together), and a
// line taken out and checked, about candidateCost stops' worth, at each
// place a literal might stand (the product of its bytes' frequencies, as
// if independent). For "panic\(\"[a-z]+: " the scan for ": " stops less
// often than the one for "panic(\"", but at far more places to check.
func (ls *litSet) cost() float64 {
	const candidateCost = 20
	n := 0.0
	for _, b := range ls.anchors {
		n += float64(byteRank(b))
	}
	for _, l := range ls.lits {
		p := 1.0
		for _, b := range l.s {
			f := float64(byteRank(b))
			if l.fold && caseFlip(b, true) != b {
				f += float64(byteRank(caseFlip(b, true)))
			}
			p *= f / 100000
		}
		n += candidateCost * 100000 * p
	}
	return n
}

// requiredSets returns sets of literals such that every match of re
// contains one literal of each set: the required pieces of a
// concatenation, each on its own (nested ones flattened), or the one set
// required finds.
func requiredSets(re *syntax.Regexp) [][]lit {
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return requiredSets(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredSets(re.Sub[0])
		}
		return nil
	case syntax.OpConcat:
		var out [][]lit
		for _, sub := range re.Sub {
			out = append(out, requiredSets(sub)...)
		}
		return out
	}
	if set := required(re); len(set) > 0 {
		return [][]lit{set}
	}
	return nil
}

// required returns literals one of which every match of re contains, or
// nil when it cannot tell.
func required(re *syntax.Regexp) []lit {
	switch re.Op {
	case syntax.OpLiteral:
		return literalPieces(re)
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []lit
		for _, sub := range re.Sub {
			if s := required(sub); better(s, best) {
				best = s
			}
		}
		return best
	case syntax.OpAlternate:
		var all []lit
		for _, sub := range re.Sub {
			s := required(sub)
			if len(s) == 0 {
				return nil // this branch can match without any literal
			}
			all = append(all, s...)
		}
		return all
	}
	return nil
}

// literalPieces gives a literal node as a one-literal set. A case-folded
// literal keeps only its longest run of runes whose case variants all have
// its byte length ("k" also matches the Kelvin sign, 3 bytes): a window of
// the literal's length then holds any variant.
func literalPieces(re *syntax.Regexp) []lit {
	fold := re.Flags&syntax.FoldCase != 0
	var best, cur []byte
	for _, r := range re.Rune {
		if fold && !sameWidthFold(r) {
			if len(cur) > len(best) {
				best = cur
			}
			cur = nil
			continue
		}
		cur = utf8.AppendRune(cur, r)
	}
	if len(cur) > len(best) {
		best = cur
	}
	if len(best) == 0 || bytes.IndexByte(best, '\n') >= 0 {
		return nil // a line never holds "\n": leave such patterns to the regexp
	}
	return []lit{{s: best, fold: fold}}
}

func sameWidthFold(r rune) bool {
	n := utf8.RuneLen(r)
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if utf8.RuneLen(f) != n {
			return false
		}
	}
	return true
}

// better prefers the set whose shortest literal is longer, then the smaller
// set (within one branch of an alternation).
func better(a, b []lit) bool {
	if len(a) == 0 {
		return false
	}
	if len(b) == 0 {
		return true
	}
	if ma, mb := shortest(a), shortest(b); ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func shortest(set []lit) int {
	n := -1
	for _, l := range set {
		if n < 0 || len(l.s) < n {
			n = len(l.s)
		}
	}
	return n
}

// rarest is the offset of the byte of l least common in source text, or -1
// when none can anchor it (a folded literal is anchored on ASCII only,
// whose case variants are one byte).
func rarest(l lit) int {
	best, rank := -1, 1<<30 // rank: how common; the lowest wins
	for i, b := range l.s {
		if l.fold && b >= utf8.RuneSelf {
			continue
		}
		r := byteRank(b)
		if l.fold && caseFlip(b, true) != b {
			r += byteRank(caseFlip(b, true)) // either case stops the scan
		}
		if r < rank {
			best, rank = i, r
		}
	}
	return best
}

// byteFreq is how often each ASCII byte occurs in source code, per 100,000
// bytes: counted over the source and text files (under 100 KB, outside
// testdata and vendor) of Go's own tree and a module cache. Bytes not
// listed, and all above ASCII, count as rare. Frequencies, not a rank: a
// case-folded letter is as common as its two cases together, so a folded
// literal is anchored on the byte whose cases together are rarest (with
// ranks summed, a space beat every letter, and "(?i)connection refused"
// stopped at every space).
var byteFreq = [128]uint16{
	' ': 14099, 'e': 6182, 't': 5040, '\t': 4310, 'r': 4219, 'n': 3905, 'i': 3569, 'a': 3484,
	'\n': 3448, 's': 3295, 'o': 3113, 'l': 2257, 'c': 2057, ',': 1801, 'd': 1719, 'u': 1710,
	'f': 1652, 'p': 1548, '.': 1547, '/': 1300, '(': 1294, ')': 1293, '0': 1282, 'm': 1257, 'g': 1165,
	'"': 1141, 'h': 1093, '=': 948, 'x': 881, 'b': 792, 'y': 772, ':': 758, 'S': 752, '{': 707,
	'}': 705, 'T': 699, '1': 651, 'E': 620, '_': 557, 'v': 552, 'R': 490, 'I': 486, '2': 486,
	'A': 476, 'C': 462, 'k': 462, 'w': 448, 'O': 440, 'P': 432, '4': 371, 'D': 366, 'N': 355,
	'F': 339, 'L': 335, '6': 319, 'M': 317, '3': 303, '[': 264, ']': 264, 'B': 263, '-': 261,
	'*': 229, '8': 228, 'V': 213, '5': 187, 'G': 180, 'U': 173, 'H': 157, '9': 143, '!': 141,
	'7': 137, '\\': 127, '&': 124, '+': 123, 'X': 118, '%': 117, ';': 117, 'W': 110, 'z': 110,
	'\'': 109, 'j': 101, 'q': 97, 'Y': 97, '`': 91, '<': 84, '|': 77, 'K': 71, '>': 66, 'Q': 48,
	'$': 46, 'J': 32, '#': 31, 'Z': 23, '?': 11, '^': 9, '@': 6, '~': 4,
}

// byteRank is how common b is in source code (see byteFreq).
func byteRank(b byte) int {
	if b < utf8.RuneSelf {
		return int(byteFreq[b])
	}
	return 0
}

// caseFlip returns the other case of an ASCII letter when fold is set, else b.
func caseFlip(b byte, fold bool) byte {
	switch {
	case !fold:
		return b
	case 'a' <= b && b <= 'z':
		return b - 'a' + 'A'
	case 'A' <= b && b <= 'Z':
		return b - 'A' + 'a'
	}
	return b
}

// scanner finds a prefilter's literals in one buffer, front to back. It
// remembers where each anchor byte occurs next, so a rare byte is looked
// for once per buffer, not once per candidate.
type scanner struct {
	ls   *litSet
	data []byte
	next []int // per anchor: its next offset (len(data) when none); -1 to look again
}

func (ls *litSet) scanner(data []byte, sc *scanner) *scanner {
	sc.ls, sc.data = ls, data
	sc.next = sc.next[:0]
	for range ls.anchors {
		sc.next = append(sc.next, -1)
	}
	return sc
}

// find returns the offset of a literal starting at or after pos, or -1. No
// literal starts on an earlier line than the one returned: each anchor byte
// is on its literal's line (literals hold no "\n"), and the anchors are
// taken in order.
func (sc *scanner) find(pos int) int {
	data := sc.data
	if ls := sc.ls; len(ls.lits) == 1 && !ls.lits[0].fold {
		// One literal, one anchor byte: the loop below without its
		// bookkeeping, which costs more than the search where the anchor
		// is a common byte (a quote, a colon).
		l := ls.lits[0]
		b := l.s[l.off]
		for cur := pos + l.off; cur < len(data); {
			i := bytes.IndexByte(data[cur:], b)
			if i < 0 {
				return -1
			}
			st := cur + i - l.off
			if st+len(l.s) <= len(data) && bytes.Equal(data[st:st+len(l.s)], l.s) {
				return st
			}
			cur += i + 1
		}
		return -1
	}
	for cur := pos; ; {
		// The nearest anchor at or after cur; each is looked for again
		// only once the last one found is behind cur.
		at, which := len(data), -1
		for k, b := range sc.ls.anchors {
			if sc.next[k] < cur {
				if i := bytes.IndexByte(data[cur:], b); i < 0 {
					sc.next[k] = len(data)
				} else {
					sc.next[k] = cur + i
				}
			}
			if sc.next[k] < at {
				at, which = sc.next[k], k
			}
		}
		if which < 0 {
			return -1
		}
		b := data[at]
		first := -1
		for _, l := range sc.ls.lits {
			if c := l.s[l.off]; c != b && caseFlip(c, l.fold) != b {
				continue
			}
			st := at - l.off
			if st < pos || st+len(l.s) > len(data) {
				continue
			}
			w := data[st : st+len(l.s)]
			if l.fold && bytes.EqualFold(w, l.s) || !l.fold && bytes.Equal(w, l.s) {
				if first < 0 || st < first {
					first = st
				}
			}
		}
		if first >= 0 {
			return first
		}
		cur = at + 1 // no literal around this anchor: look past it
	}
}

// anyIn reports whether one of the scan's literals occurs in data.
func (ls *litSet) anyIn(data []byte) bool {
	return slices.ContainsFunc(ls.lits, func(l lit) bool { return l.in(data) })
}

// keepTail drops all of buf, which starts at file offset off, but its last
// bytes, those that may begin a literal the next read completes; it returns
// the new offset of buf's start and buf.
func (ls *litSet) keepTail(off int64, buf []byte) (int64, []byte) {
	k := 0
	for _, l := range ls.lits {
		k = max(k, len(l.s)-1)
	}
	k = min(k, len(buf))
	drop := len(buf) - k
	return off + int64(drop), buf[:copy(buf, buf[drop:])]
}

// holds reports whether line contains one literal of each set in also.
func (ls *litSet) holds(line []byte) bool {
	for _, set := range ls.also {
		if !slices.ContainsFunc(set, func(l lit) bool { return l.in(line) }) {
			return false
		}
	}
	return true
}

// in reports whether l occurs in line.
func (l lit) in(line []byte) bool {
	if !l.fold {
		return bytes.Contains(line, l.s)
	}
	// Folded: try each place the anchor byte stands, in either case.
	a, b := l.s[l.off], caseFlip(l.s[l.off], true)
	last := len(line) - len(l.s) // the last place l can start
	for st := 0; st <= last; st++ {
		seg := line[st+l.off : last+l.off+1]
		j := bytes.IndexByte(seg, a)
		if k := bytes.IndexByte(seg, b); k >= 0 && (j < 0 || k < j) {
			j = k
		}
		if j < 0 {
			return false
		}
		st += j
		if bytes.EqualFold(line[st:st+len(l.s)], l.s) {
			return true
		}
	}
	return false
}
