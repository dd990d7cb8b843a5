// Package suite is the ACP conformance suite: it launches any ACP agent over
// stdio, drives it as an editor would (Zed's capabilities by default), records
// every line in both directions, validates each against the official schema
// (package acpschema) and checks the agent's behaviour: version negotiation,
// JSON-RPC hygiene, prompt and cancel semantics, capability gating, tool-call
// consistency and session/load replay. It imports nothing else of this
// repository: agents are black boxes, the bridge included.
//
// Run executes the behaviour checks and returns a Report; RunScenario replays
// a txtar transcript and compares the agent's output with its golden section.
package suite
