package mapping

import (
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
)

// notice shows the agent's own words. Out-of-band status (a notice with a
// title: a retry, a dead MCP server) is a `notice` update for a client that
// takes them; everything else, and status for other clients, is agent text.
// Live and replay alike.
func (t *Translator) notice(n session.Notice) []acp.Update {
	if !t.o.Notices || strings.TrimSpace(n.Title) == "" {
		text := n.Text
		if text == "" {
			text = NoticeText(n.Title, n.Description)
		}
		if text == "" {
			return nil
		}
		return []acp.Update{acp.AgentMessageChunk{Content: acp.TextBlock(text)}}
	}
	sev := n.Severity
	switch sev {
	case acp.NoticeInfo, acp.NoticeWarning, acp.NoticeError:
	default:
		sev = acp.NoticeInfo
	}
	return []acp.Update{acp.Notice{Severity: sev, Title: strings.TrimSpace(n.Title), Description: n.Description}}
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
