// Package conformance holds the ACP conformance checks: tests that launch an
// agent binary over real stdio, drive it as an editor would, and validate
// every message in both directions against the official ACP schema
// (subpackage acpschema). It depends on no internals of the bridge.
//
// The suite itself, usable against any ACP agent, is subpackage suite and
// its command cmd/acp-conform:
//
//	go run ./conformance/cmd/acp-conform -- <agent command> [args]
//
// Scenario transcripts (txtar) live in testdata/scenarios.
package conformance
