package match

import (
	"strings"

	"github.com/acp-bridge/acp-bridge/diffs"
)

// replacement is the edit for a line match at line s: the file's lines
// s..s+len(old)-1 (and the break after the last when old ended with one)
// become new, adapted to the file.
func (f *file) replacement(s int, old []string, oldTrailing bool, new []string, newTrailing bool, tol Tolerance) diffs.Edit {
	last := s + len(old) - 1
	e := diffs.Edit{Start: f.start[s], End: f.end[last]}
	if oldTrailing {
		e.End = f.next[last]
	}
	eol := lineEnding(f.content)
	lines := adapt(old, f.text[s:last+1], new, f.unit(), tol)
	e.New = strings.Join(lines, eol)
	if newTrailing && len(new) > 0 {
		e.New += eol
	}
	return e
}

// adapt writes new for the file: a line new keeps from old is the file's
// line as it is; a line that replaces an old line takes the file's
// indentation for its depth there; a line new adds between them takes the
// same adjustment as its neighbour at the model's same depth, so lines the
// model wrote at one level stay at one level; and, after a match that read
// punctuation as ASCII, changed lines take the file's quotes and dashes.
func adapt(old, got, new []string, fileUnit string, tol Tolerance) []string {
	keep := align(old, new)
	ind := newIndenter(old, got, new, fileUnit)
	pair := pairChanged(old, new, keep)
	out := make([]string, len(new))
	for k := range new {
		if j := keep[k]; j >= 0 {
			out[k] = got[j]
		}
	}
	// The last line kept or replaced, in old and in new: an added line k
	// stands where old line prevOld+(k-prevNew) stood.
	prevOld, prevNew := -1, -1
	for k, l := range new {
		if j := max(keep[k], pair[k]); j >= 0 {
			prevOld, prevNew = j, k
		}
		if keep[k] >= 0 {
			continue
		}
		if blank(l) {
			out[k] = ""
			continue
		}
		ws, body := indent(l)
		if tol == Punctuation {
			body = punctLike(body, old, got)
		}
		// A replaced line, or any line of a block the model only moved,
		// by the old lines; an added line by its neighbour, when it has
		// one at its depth.
		fws, ok := "", false
		if pair[k] < 0 && !ind.shifted {
			fws, ok = ind.neighbour(new, out, keep, k, ws)
		}
		if !ok {
			fws = ind.indent(ws, prevOld+k-prevNew)
		}
		out[k] = fws + body
	}
	return out
}

// neighbour is the file's indentation for a line new adds (line k, which
// the model indented ws), from the nearest line of new at the model's same
// depth: above it first (every line above has its place already), then a
// kept line below, without crossing a line the model wrote shallower
// (another block). When the line right above is shallower, the added line
// opens a level: that line's place plus the extra depth in the file's
// steps. ok is false when no such line is near.
func (ind *indenter) neighbour(new, out []string, keep []int, k int, ws string) (string, bool) {
	for i := k - 1; i >= 0; i-- {
		if blank(new[i]) {
			continue
		}
		nws, _ := indent(new[i])
		if nws == ws {
			ows, _ := indent(out[i])
			return ows, true
		}
		if len(nws) < len(ws) {
			if !strings.HasPrefix(ws, nws) {
				return "", false
			}
			ows, _ := indent(out[i])
			return ows + ind.convert(ws[len(nws):]), true
		}
	}
	for i := k + 1; i < len(new); i++ {
		if blank(new[i]) {
			continue
		}
		nws, _ := indent(new[i])
		if keep[i] >= 0 && nws == ws {
			ows, _ := indent(out[i])
			return ows, true
		}
		if len(nws) < len(ws) {
			break
		}
	}
	return "", false
}

// pairChanged pairs each line of new that is not kept with the old line
// it replaces, or -1 for a line new adds: between two kept lines, the
// changed lines of new and the old lines there are paired in order, each
// with the old line most like it (a monotone alignment scored by shared
// prefix and suffix), so a line added in the middle of a changed run is
// told from the lines around it.
func pairChanged(old, new []string, keep []int) []int {
	pair := make([]int, len(new))
	for i := range pair {
		pair[i] = -1
	}
	prevOld, prevNew := -1, -1
	for k := 0; k <= len(new); k++ {
		if k < len(new) && keep[k] < 0 {
			continue
		}
		nextOld := len(old)
		if k < len(new) {
			nextOld = keep[k]
		}
		pairGap(old[prevOld+1:nextOld], new[prevNew+1:k], pair[prevNew+1:k], prevOld+1)
		if k < len(new) {
			prevOld, prevNew = keep[k], k
		}
	}
	return pair
}

// pairGap pairs the lines of n with those of o (o's first at index base
// in old), writing into pair.
func pairGap(o, n []string, pair []int, base int) {
	switch {
	case len(o) == 0 || len(n) == 0:
		return
	case len(n) <= len(o) || len(o)*len(n) > 1<<14:
		// No more lines than were there, or too many to weigh: in order.
		for i := range min(len(n), len(o)) {
			pair[i] = base + i
		}
		return
	}
	// best[i][j]: the best score pairing n[i:] with o[j:].
	best := make([][]float64, len(n)+1)
	for i := range best {
		best[i] = make([]float64, len(o)+1)
	}
	for i := len(n) - 1; i >= 0; i-- {
		for j := len(o) - 1; j >= 0; j-- {
			best[i][j] = max(best[i+1][j], best[i][j+1], best[i+1][j+1]+likeness(n[i], o[j]))
		}
	}
	for i, j := 0, 0; i < len(n) && j < len(o); {
		switch s := best[i][j]; {
		case s == best[i+1][j+1]+likeness(n[i], o[j]):
			pair[i] = base + j
			i++
			j++
		case s == best[i+1][j]:
			i++
		default:
			j++
		}
	}
}

// likeness is how alike two lines are, ignoring indentation: the share of
// the longer one that their common prefix and suffix cover, plus a little
// so that pairing any two lines beats pairing none.
func likeness(a, b string) float64 {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return 0.01 + float64(p+s)/float64(max(len(a), len(b), 1))
}

// align pairs each line of new with the line of old it keeps unchanged
// (a longest common subsequence), or -1.
func align(old, new []string) []int {
	keep := make([]int, len(new))
	for i := range keep {
		keep[i] = -1
	}
	n, m := len(new), len(old)
	if n == 0 || m == 0 {
		return keep
	}
	if n*m > 1<<20 {
		// Too large to align: pair equal lines at equal positions.
		for i := 0; i < n && i < m; i++ {
			if new[i] == old[i] {
				keep[i] = i
			}
		}
		return keep
	}
	// lcs[i][j]: the longest common subsequence of new[i:] and old[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if new[i] == old[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case new[i] == old[j]:
			keep[i] = j
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			i++
		default:
			j++
		}
	}
	return keep
}

// indenter maps the model's indentation to the file's, learnt from the
// matched lines: old line j's leading whitespace is the file's line j's.
type indenter struct {
	oldWS, gotWS []string
	at           []int  // the old line each pair is from
	model, file  string // one indentation step in each, "" when unknown
	// shifted: every file line's indentation is the model's with add
	// prepended, or with cut removed from its start.
	shifted  bool
	add, cut string
}

func newIndenter(old, got, new []string, fileUnit string) *indenter {
	ind := &indenter{file: unitOf(got)}
	if ind.file == "" {
		ind.file = fileUnit
	}
	for j, l := range old {
		if blank(l) {
			continue
		}
		ws, _ := indent(l)
		gws, _ := indent(got[j])
		ind.oldWS = append(ind.oldWS, ws)
		ind.gotWS = append(ind.gotWS, gws)
		ind.at = append(ind.at, j)
	}
	ind.model = unitOf(append(append([]string(nil), old...), new...))
	ind.shift()
	return ind
}

// indent is the file's indentation for a changed line the model indented
// with ws, near old line pos: the file's own where an old line had the
// same (the nearest such), else the nearest shallower old line's plus the
// extra depth in the file's steps.
func (ind *indenter) indent(ws string, pos int) string {
	if ind.shifted {
		// The model's block is the file's moved by one amount: move the
		// line by it too (aider's rule), whatever the steps look like.
		if ind.add != "" {
			return ind.add + ws
		}
		if strings.HasPrefix(ws, ind.cut) {
			return ws[len(ind.cut):]
		}
	}
	best, bestDist := -1, 0
	for j, o := range ind.oldWS {
		if o != ws {
			continue
		}
		if d := abs(ind.at[j] - pos); best < 0 || d < bestDist {
			best, bestDist = j, d
		}
	}
	if best >= 0 {
		return ind.gotWS[best]
	}
	base := -1
	for j, o := range ind.oldWS {
		if len(o) < len(ws) && strings.HasPrefix(ws, o) && (base < 0 || len(o) > len(ind.oldWS[base])) {
			base = j
		}
	}
	if base >= 0 {
		return ind.gotWS[base] + ind.convert(ws[len(ind.oldWS[base]):])
	}
	// Shallower than every old line: as much shallower in the file.
	deep := -1
	for j, o := range ind.oldWS {
		if strings.HasPrefix(o, ws) && (deep < 0 || len(o) < len(ind.oldWS[deep])) {
			deep = j
		}
	}
	if deep >= 0 {
		less := ind.convert(ind.oldWS[deep][len(ws):])
		if g := ind.gotWS[deep]; strings.HasSuffix(g, less) {
			return g[:len(g)-len(less)]
		}
	}
	return ind.convert(ws)
}

// convert writes whole steps of the model's indentation as the file's.
func (ind *indenter) convert(ws string) string {
	if ind.model == "" || ind.file == "" || ind.model == ind.file || len(ws)%len(ind.model) != 0 ||
		strings.Repeat(ind.model, len(ws)/len(ind.model)) != ws {
		return ws
	}
	return strings.Repeat(ind.file, len(ws)/len(ind.model))
}

// unitOf is one indentation step of lines: a tab when they indent with
// tabs, else the greatest common divisor of their space indentations.
func unitOf(lines []string) string {
	g := 0
	for _, l := range lines {
		if blank(l) {
			continue
		}
		ws, _ := indent(l)
		if ws == "" {
			continue
		}
		if ws[0] == '\t' {
			return "\t"
		}
		if strings.Trim(ws, " ") == "" {
			g = gcd(g, len(ws))
		}
	}
	if g == 0 || g > 8 {
		return ""
	}
	return strings.Repeat(" ", g)
}

// unit is the file's indentation step, for a match whose own lines do not
// show one.
func (f *file) unit() string { return unitOf(f.text) }

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// punctLike gives a changed line the file's punctuation where the model
// normalised it: when the matched lines use typographic quotes (or
// dashes) where old had ASCII, the line's ASCII ones become the file's
// style; when old had typographic ones where the file has ASCII, the
// line's become ASCII.
func punctLike(body string, old, got []string) string {
	o, g := strings.Join(old, "\n"), strings.Join(got, "\n")
	fileCurly2 := strings.ContainsAny(g, "\u201C\u201D") && !strings.Contains(g, `"`)
	fileCurly1 := strings.ContainsAny(g, "\u2018\u2019") && !strings.Contains(g, `'`)
	modelCurly := strings.ContainsAny(o, "\u201C\u201D\u2018\u2019")
	modelDash := strings.ContainsAny(o, "\u2013\u2014")
	// The file's one dash, where old wrote ASCII and the matched lines
	// have no ASCII hyphen (code's minus signs keep this off).
	var fileDash rune
	if !modelDash && !strings.Contains(g, "-") {
		en, em := strings.ContainsRune(g, '\u2013'), strings.ContainsRune(g, '\u2014')
		switch {
		case en && !em:
			fileDash = '\u2013'
		case em && !en:
			fileDash = '\u2014'
		}
	}
	var b strings.Builder
	prev := ' '
	for _, r := range body {
		switch {
		case r == '"' && fileCurly2 && !modelCurly:
			r = curly(prev, '\u201C', '\u201D')
		case r == '\'' && fileCurly1 && !modelCurly:
			r = curly(prev, '\u2018', '\u2019')
		case (r == '\u201C' || r == '\u201D') && modelCurly && !strings.ContainsAny(g, "\u201C\u201D"):
			r = '"'
		case (r == '\u2018' || r == '\u2019') && modelCurly && !strings.ContainsAny(g, "\u2018\u2019"):
			r = '\''
		case (r == '\u2013' || r == '\u2014') && modelDash && !strings.ContainsRune(g, r):
			r = '-'
		case r == '-' && fileDash != 0:
			r = fileDash
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

// curly picks the opening quote after a space or an opening bracket, the
// closing one elsewhere.
func curly(prev rune, open, close rune) rune {
	switch prev {
	case ' ', '\t', '(', '[', '{', '<':
		return open
	}
	return close
}

// shift finds whether the file's indentation is the model's moved by one
// constant amount (added or removed at the start) on every matched line.
func (ind *indenter) shift() {
	if len(ind.oldWS) == 0 {
		return
	}
	add, cut := true, true
	o0, g0 := ind.oldWS[0], ind.gotWS[0]
	var a, c string
	if strings.HasSuffix(g0, o0) {
		a = g0[:len(g0)-len(o0)]
	} else {
		add = false
	}
	if strings.HasSuffix(o0, g0) {
		c = o0[:len(o0)-len(g0)]
	} else {
		cut = false
	}
	for j, o := range ind.oldWS {
		g := ind.gotWS[j]
		add = add && g == a+o
		cut = cut && o == c+g
	}
	switch {
	case add && a != "":
		ind.shifted, ind.add = true, a
	case cut && c != "":
		ind.shifted, ind.cut = true, c
	}
}
