package mapping

import "github.com/acp-bridge/acp-bridge/acp"

// ParentMetaKey is the tool_call _meta key that ties a sub-call's card to
// the card that made it (a Code Mode program's run_code, a subagent's task):
// {"parentToolCallId": "<id>"}, and for a subagent's call {"agent": "<its
// profile>"}. ACP v1 has no nesting of tool calls, so editors show sub-calls
// as cards of their own, in order after the parent card (their ids,
// "<parent>:code:<n>", "<parent>:task:<n>", say the same, and a subagent's
// titles start with its name); a client that knows the key can nest them.
const ParentMetaKey = "acp_bridge"

// withParent adds the parent link to a tool call's _meta; no parent, no change.
func withParent(m acp.Meta, parent, agent string) acp.Meta {
	if parent == "" {
		return m
	}
	if m == nil {
		m = acp.Meta{}
	}
	link := map[string]any{"parentToolCallId": parent}
	if agent != "" {
		link["agent"] = agent
	}
	m[ParentMetaKey] = link
	return m
}
