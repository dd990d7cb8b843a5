package mapping

import "github.com/acp-bridge/acp-bridge/acp"

// ParentMetaKey is the tool_call _meta key that ties a Code Mode sub-call's
// card to the run_code card that made it: {"parentToolCallId": "<id>"}.
// ACP v1 has no nesting of tool calls, so editors show sub-calls as cards of
// their own, in order after the run_code card (their ids,
// "<parent>:code:<n>", say the same); a client that knows the key can nest them.
const ParentMetaKey = "acp_bridge"

// withParent adds the parent link to a tool call's _meta; no parent, no change.
func withParent(m acp.Meta, parent string) acp.Meta {
	if parent == "" {
		return m
	}
	if m == nil {
		m = acp.Meta{}
	}
	m[ParentMetaKey] = map[string]any{"parentToolCallId": parent}
	return m
}
