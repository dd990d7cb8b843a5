package mapping

import (
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
)

// notice shows the agent's own news: a `notice` update for a client that
// takes them, else agent text, live and on replay alike.
func (t *Translator) notice(n session.Notice) []acp.Update {
	if !t.o.Notices {
		text := n.Text
		if text == "" {
			text = NoticeText(n.Title, n.Description)
		}
		if text == "" {
			return nil
		}
		return []acp.Update{acp.AgentMessageChunk{Content: acp.TextBlock(text)}}
	}
	title, desc := n.Title, n.Description
	if title == "" {
		title, desc = splitTitle(n.Text)
	}
	if title == "" {
		return nil // the schema wants a non-empty title, and there is nothing to say
	}
	sev := n.Severity
	switch sev {
	case acp.NoticeInfo, acp.NoticeWarning, acp.NoticeError:
	default:
		sev = acp.NoticeInfo
	}
	return []acp.Update{acp.Notice{Severity: sev, Title: title, Description: desc}}
}

// NoticeText is a notice as agent text, set apart from the answer around it.
func NoticeText(title, desc string) string {
	s := strings.TrimSpace(title)
	if d := strings.TrimSpace(desc); d != "" {
		if s != "" && !strings.ContainsAny(s[len(s)-1:], ".!?:…") {
			s += "."
		}
		s += " " + d
	}
	if s == "" {
		return ""
	}
	return "\n\n*" + s + "*\n\n"
}

// splitTitle makes a notice title from agent text written before notices
// had titles (old logs): the markup that set it apart goes, the first
// sentence is the title and the rest the description.
func splitTitle(text string) (title, desc string) {
	s := strings.TrimSpace(text)
	for _, p := range [][2]string{{"[", "]"}, {"*", "*"}, {"_", "_"}} {
		if len(s) >= 2 && strings.HasPrefix(s, p[0]) && strings.HasSuffix(s, p[1]) {
			s = strings.TrimSpace(s[len(p[0]) : len(s)-len(p[1])])
		}
	}
	if s == "" {
		return "", ""
	}
	// The first sentence end that is not inside a quoted name or a number.
	for i := 0; i < len(s)-1; i++ {
		if (s[i] == '.' || s[i] == ';') && s[i+1] == ' ' && i > 0 {
			return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		}
	}
	return s, ""
}
