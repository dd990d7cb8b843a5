package session

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// TitleMax bounds a session's title in runes (an ellipsis may follow): the
// editor shows it on one line, in its history and above the thread.
const TitleMax = 60

// TitleFrom is the one rule that names a session, live (the agent's
// Title event after the first exchange) and in a list (a stored session
// without a Title event yet): the prompt's first line with text in it
// that is not an attached resource, spaces collapsed, shortened to
// TitleMax runes (Shorten).
func TitleFrom(prompt string) string {
	var line string
	for l := range strings.Lines(prompt) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "<resource") && !strings.HasPrefix(l, "[resource") {
			line = l
			break
		}
	}
	return Shorten(strings.Join(strings.Fields(line), " "), TitleMax)
}

// Shorten cuts one line to max runes at a word boundary in its second
// half where there is one, drops the spaces and punctuation left at the
// cut, and marks it with "…"; a line of at most max runes is returned as
// it is. mapping.OptionName shortens a permission button's label with it.
func Shorten(line string, max int) string {
	if utf8.RuneCountInString(line) <= max {
		return line
	}
	runes := []rune(line)[:max]
	cut := len(runes)
	for i := len(runes) - 1; i > max/2; i-- {
		if unicode.IsSpace(runes[i]) {
			cut = i
			break
		}
	}
	return strings.TrimRightFunc(string(runes[:cut]), func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }) + "…"
}
