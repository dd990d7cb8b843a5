// Package acp holds the Agent Client Protocol wire types (v1, and the v2
// draft's in v2.go), method names, error codes and the agent side of a
// connection over newline-delimited JSON-RPC 2.0
// (github.com/sourcegraph/jsonrpc2), which negotiates the dialect
// (v2conn.go).
//
// The package knows nothing about tools, models or what a session means: it
// decodes requests, hands them to an [Agent], and gives the agent a [Client]
// proxy for the calls it makes back to the editor.
//
// Wire types follow the official schema release v1.21.0. Optional fields are
// pointers or use omitzero so that "absent", "null" and "empty" stay distinct
// where the protocol gives them different meanings (a tool_call_update's
// content replaces the card's content; an absent one keeps it).
package acp

// ProtocolVersion is the stable ACP major version this package speaks
// (ProtocolVersion2, the draft, only to a client that asks for it).
const ProtocolVersion = 1
