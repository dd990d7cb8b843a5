package match

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// file is content split into lines: each line's text without its break,
// and the byte offsets of its start, its end (before the break) and the
// next line's start.
type file struct {
	content string
	text    []string
	start   []int
	end     []int
	next    []int
	norm    map[Tolerance][]string // normalized lines, made once per step
}

func splitFile(content string) *file {
	f := &file{content: content, norm: map[Tolerance][]string{}}
	pos := 0
	if strings.HasPrefix(content, "\uFEFF") {
		pos = len("\uFEFF") // the byte order mark is not part of line 1
	}
	for pos < len(content) || pos == 0 && len(content) == 0 {
		i := strings.IndexByte(content[pos:], '\n')
		var end, next int
		if i < 0 {
			end, next = len(content), len(content)
		} else {
			end, next = pos+i, pos+i+1
			if end > pos && content[end-1] == '\r' {
				end--
			}
		}
		f.text = append(f.text, content[pos:end])
		f.start = append(f.start, pos)
		f.end = append(f.end, end)
		f.next = append(f.next, next)
		if i < 0 {
			break
		}
		pos = next
	}
	return f
}

// normalized returns the file's lines as step tol compares them.
func (f *file) normalized(tol Tolerance) []string {
	if n, ok := f.norm[tol]; ok {
		return n
	}
	n := make([]string, len(f.text))
	for i, l := range f.text {
		n[i] = normalize(l, tol)
	}
	f.norm[tol] = n
	return n
}

// find returns the first lines (0-based) of the non-overlapping places
// where old's lines equal the file's as step tol compares them.
func (f *file) find(old []string, tol Tolerance) []int {
	lines := f.normalized(tol)
	want := make([]string, len(old))
	for i, l := range old {
		want[i] = normalize(l, tol)
	}
	var starts []int
	for i := 0; i+len(want) <= len(lines); i++ {
		ok := true
		for k, w := range want {
			if lines[i+k] != w {
				ok = false
				break
			}
		}
		if ok {
			starts = append(starts, i)
			i += len(want) - 1
		}
	}
	return starts
}

// normalize is one line as step tol compares it. Each step includes the
// stricter ones' leniency.
func normalize(l string, tol Tolerance) string {
	switch tol {
	case Exact:
		return l
	case TrailingSpace:
		return strings.TrimRight(l, " \t")
	case Indentation:
		return strings.Trim(l, " \t")
	case InnerSpace:
		return strings.Join(strings.Fields(l), " ")
	default:
		return strings.Join(strings.Fields(asciiPunct(l)), " ")
	}
}

// asciiPunct reads typographic dashes, quotes and spaces as their ASCII
// look-alikes (the set codex's seek_sequence normalises).
func asciiPunct(s string) string {
	if isASCII(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if a, ok := punct[r]; ok {
			return a
		}
		return r
	}, s)
}

var punct = map[rune]rune{
	'\u2010': '-', '\u2011': '-', '\u2012': '-', '\u2013': '-', '\u2014': '-', '\u2015': '-', '\u2212': '-',
	'\u2018': '\'', '\u2019': '\'', '\u201A': '\'', '\u201B': '\'',
	'\u201C': '"', '\u201D': '"', '\u201E': '"', '\u201F': '"',
	'\u00A0': ' ', '\u2002': ' ', '\u2003': ' ', '\u2004': ' ', '\u2005': ' ', '\u2006': ' ',
	'\u2007': ' ', '\u2008': ' ', '\u2009': ' ', '\u200A': ' ', '\u202F': ' ', '\u205F': ' ', '\u3000': ' ',
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// indent splits a line into its leading whitespace and the rest.
func indent(l string) (ws, body string) {
	i := 0
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	return l[:i], l[i:]
}

func blank(l string) bool { return strings.Trim(l, " \t") == "" }

// inline finds a one-line old inside lines, ignoring runs of whitespace
// and reading typographic punctuation as ASCII (opencode's
// WhitespaceNormalizedReplacer matches inside a line too). It returns the
// byte spans in content and the step that was needed.
func (f *file) inline(old string) (spans [][2]int, tol Tolerance) {
	tokens := strings.Fields(old)
	if len(tokens) == 0 {
		return nil, Exact
	}
	var pat strings.Builder
	for i, tok := range tokens {
		if i > 0 {
			pat.WriteString(`[^\S\n]+`)
		}
		for _, r := range tok {
			if alts, ok := punctClass[asciiOf(r)]; ok {
				pat.WriteString(alts)
			} else {
				pat.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
	}
	re, err := regexp.Compile(pat.String())
	if err != nil {
		return nil, Exact
	}
	tol = InnerSpace
	for i, l := range f.text {
		for _, m := range re.FindAllStringIndex(l, -1) {
			spans = append(spans, [2]int{f.start[i] + m[0], f.start[i] + m[1]})
			if got := l[m[0]:m[1]]; asciiPunct(got) != got || asciiPunct(old) != old {
				tol = Punctuation
			}
		}
	}
	return spans, tol
}

// asciiOf is r's ASCII look-alike, or r.
func asciiOf(r rune) rune {
	if a, ok := punct[r]; ok {
		return a
	}
	return r
}

// punctClass matches an ASCII dash or quote and its typographic forms.
var punctClass = map[rune]string{
	'-':  "[-\u2010-\u2015\u2212]",
	'\'': "['\u2018-\u201B]",
	'"':  "[\"\u201C-\u201F]",
}
