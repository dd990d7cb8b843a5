// Package registry defines what a tool is: a typed definition (Add[In, Out]),
// its parameter and output schemas, argument validation with path-qualified
// INVALID_ARGS messages, the model-facing content it renders, and the
// presentation views (cards) it offers the editor.
//
// Tools live in layers: the Registry's globals and, per session, a Scope's
// local tools, which shadow globals of the same name. A Scope narrows the
// globals with Restrict (allow and deny masks that intersect) and chooses a
// Mode (native, code, both) that decides whether the model calls tools
// directly or through the reserved run_code. One visibility function backs
// Get, Visible, Schemas and Resolve, so what the model is offered and what
// runs never disagree; KnownNames is the universe before restrictions,
// which Restrict checks names against. OnChange reports every change.
//
// Parameter schemas are derived from a tool's input struct with
// jsonschema-go (Tool.Schema adjusts what the Go type cannot say); an MCP
// server's schema is taken raw and not validated here (Tool.RawSchema).
// Output schemas are held to the structured subset, which refuses loud
// (UNSUPPORTED_SCHEMA, every violation listed). Failure codes are the
// Code* constants.
//
// The package never runs a tool by itself; package pipeline does.
package registry
