// Package conformance holds the ACP conformance checks: tests that launch an
// agent binary over real stdio, drive it as an editor would, and validate
// every message in both directions against the official ACP schema
// (subpackage acpschema). It depends on no internals of the bridge.
package conformance
