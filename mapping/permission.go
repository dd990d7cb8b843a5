package mapping

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxOptionName bounds a permission option's name in runes. Zed shows the
// options as buttons side by side; a long subject (a whole command line)
// pushes the others off the prompt.
const MaxOptionName = 60

// OptionName is a permission option's name as a button shows it: Zed
// renders the name as plain text, so Markdown backticks would show as
// backticks; they are dropped, whitespace runs become one space, and a
// name over MaxOptionName runes is cut at a word boundary with "…".
func OptionName(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "")), " ")
	if utf8.RuneCountInString(s) <= MaxOptionName {
		return s
	}
	runes := []rune(s)[:MaxOptionName-1]
	cut := len(runes)
	for i := len(runes) - 1; i > MaxOptionName/2; i-- {
		if unicode.IsSpace(runes[i]) {
			cut = i
			break
		}
	}
	return strings.TrimRightFunc(string(runes[:cut]), unicode.IsSpace) + "…"
}
