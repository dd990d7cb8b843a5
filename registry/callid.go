package registry

import "strconv"

// Call ids. Every tool call of a session has one id, unique in the
// session: its card's in the editor, its tool events', and the key every
// part that follows the call uses. One scheme makes them, whoever makes
// the call:
//
//   - A top-level call (one the model made, or one the agent makes itself,
//     like /init's) has the id its maker gave it: the endpoint's, or the
//     command's name ("init"). Where the session used that id already it
//     gets the first free "<id>-<n>", n from 2: endpoints repeat ids
//     (call_0 in every response). The agent's call recorder gives these
//     (agent/calls.go), against every id the session's log holds.
//   - A call another call made (a Code Mode program's, a subagent's) is
//     ChildID(parent, kind, n): "<parent>:<kind>:<n>", its parent's id, what
//     made it ("code", "task") and its number among that parent's children
//     of that kind, from 1. Unique because its parent's id is, and nesting
//     composes ("call_1:task:2:code:1"). Call.Parent names the parent too,
//     so nothing parses an id.
//
// An id is opaque once given: logs written before the scheme ("init_<turn>"
// for /init's call) load as they were.

// ChildID is the id of the n-th call (from 1) of kind that the call parent
// made.
func ChildID(parent, kind string, n int) string {
	return parent + ":" + kind + ":" + strconv.Itoa(n)
}
