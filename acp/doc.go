// Package acp holds the Agent Client Protocol (v1) wire types, method names,
// error codes and the agent side of a connection over newline-delimited
// JSON-RPC 2.0 (github.com/sourcegraph/jsonrpc2).
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

// ProtocolVersion is the latest (and only) ACP major version this package speaks.
const ProtocolVersion = 1
