package match

import (
	"regexp"
	"strings"
	"sync"
)

// repair returns old and new repaired one way; ok is false when the repair
// does not apply to old (nothing to repair, or it would leave nothing).
func repair(rep Repair, old, new string) (o, n string, ok bool) {
	switch rep {
	case NoRepair:
		return old, new, true
	case LineNumbers:
		return stripNumbers(old, new)
	case Escapes:
		return unescape(old, new)
	case BlankEnds:
		return trimBlankEnds(old, new)
	}
	return "", "", false
}

// Line-number prefixes as harnesses print them: our read's "12: ",
// "12 | " and "12|" (Roo, aider), "12→" and "12\t" (cat -n style), and a
// bare "| " (a gutter whose numbers were dropped). The number may be
// right-aligned.
// Compiled at first use, not at start-up: only an edit that missed needs
// them.
var numberStyles = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`^ *[0-9]+: ?`),
		regexp.MustCompile(`^ *[0-9]+ *\| ?`),
		regexp.MustCompile(`^ *[0-9]+→`),
		regexp.MustCompile(`^ *[0-9]+\t`),
		regexp.MustCompile(`^\| ?`),
	}
})

// stripNumbers removes one style of line-number prefix. It applies when
// that style prefixes every non-blank line of old, or, when old's
// prefixed lines carry increasing numbers, some of them (a model that
// copied part of a read). new loses the same style's prefixes on the lines
// that have them. A file whose lines really start this way matched
// exactly before this is tried.
func stripNumbers(old, new string) (string, string, bool) {
	ol, ot := toLines(old)
	re := numberStyle(ol)
	if re == nil {
		return "", "", false
	}
	nl, nt := toLines(new)
	return joinLines(stripEach(ol, re), ot), joinLines(stripEach(nl, re), nt), true
}

// numberStyle is the line-number prefix style stripNumbers removes from
// old's lines, or nil.
func numberStyle(ol []string) *regexp.Regexp {
	for _, re := range numberStyles() {
		prefixed, nonBlank := 0, 0
		last, increasing := -1, true
		for _, l := range ol {
			if blank(l) {
				continue
			}
			nonBlank++
			if p := re.FindString(l); p != "" {
				prefixed++
				if num := lineNumber(p); num >= 0 {
					increasing = increasing && num > last
					last = num
				}
			}
		}
		if prefixed == 0 || prefixed < nonBlank && (!increasing || last < 0) {
			continue
		}
		if strings.TrimSpace(strings.Join(stripEach(ol, re), "")) == "" {
			continue // nothing but prefixes: nothing to match
		}
		return re
	}
	return nil
}

// firstNumber is the line a read showed old's first line at, from the
// number of its first numbered line; 0 when old has no such prefixes.
func firstNumber(old string) int {
	ol, _ := toLines(old)
	re := numberStyle(ol)
	if re == nil {
		return 0
	}
	for i, l := range ol {
		if n := lineNumber(re.FindString(l)); n > 0 {
			return max(n-i, 0)
		}
	}
	return 0
}

func lineNumber(prefix string) int {
	n, seen := 0, false
	for _, c := range prefix {
		switch {
		case c >= '0' && c <= '9':
			n, seen = n*10+int(c-'0'), true
		case seen:
			return n
		}
	}
	if !seen {
		return -1
	}
	return n
}

func stripEach(lines []string, re *regexp.Regexp) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l[len(re.FindString(l)):]
	}
	return out
}

func joinLines(lines []string, trailing bool) string {
	s := strings.Join(lines, "\n")
	if trailing {
		s += "\n"
	}
	return s
}

// The escapes a model applies once too often when it writes a JSON string
// by hand (opencode's EscapeNormalizedReplacer set).
var escapes = strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\r`, "\r", `\'`, "'", `\"`, `"`,
	"\\`", "`", `\\`, `\`, `\$`, "$", "\\\n", "\n")

// escapeSeqs are the sequences escapes undoes, to tell which kinds a
// text holds.
var escapeSeqs = []string{`\n`, `\t`, `\r`, `\'`, `\"`, "\\`", `\\`, `\$`, "\\\n"}

// unescape undoes one level of escaping in old, and in new the same way
// when new was escaped the same way (it holds a kind of escape old held):
// a new_string whose only escape is one old lacks, like a "\n" in a string
// literal the edit adds, means it literally.
func unescape(old, new string) (string, string, bool) {
	o := escapes.Replace(old)
	if o == old || strings.TrimSpace(o) == "" {
		return "", "", false
	}
	n := new
	for _, seq := range escapeSeqs {
		if strings.Contains(old, seq) && strings.Contains(new, seq) {
			n = escapes.Replace(new)
			break
		}
	}
	return o, n, true
}

// trimBlankEnds drops blank lines at the ends of old, and as many at the
// same ends of new where new has them.
func trimBlankEnds(old, new string) (string, string, bool) {
	ol, ot := toLines(old)
	lead, trail := 0, 0
	for lead < len(ol) && blank(ol[lead]) {
		lead++
	}
	for trail < len(ol)-lead && blank(ol[len(ol)-1-trail]) {
		trail++
	}
	if lead == 0 && trail == 0 || lead == len(ol) {
		return "", "", false
	}
	nl, nt := toLines(new)
	nlead, ntrail := 0, 0
	for nlead < lead && nlead < len(nl) && blank(nl[nlead]) {
		nlead++
	}
	for ntrail < trail && ntrail < len(nl)-nlead && blank(nl[len(nl)-1-ntrail]) {
		ntrail++
	}
	return joinLines(ol[lead:len(ol)-trail], ot && trail == 0), joinLines(nl[nlead:len(nl)-ntrail], nt && ntrail == 0), true
}
