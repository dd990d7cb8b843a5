package mapping

import (
	"strings"

	"github.com/acp-bridge/acp-bridge/session"
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
	// The ellipsis counts: at most MaxOptionName runes in all.
	return session.Shorten(strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "")), " "), MaxOptionName-1)
}
