//go:build unix

package bash

// findBash is bash from PATH; a system without one fails at start, and the
// error says so.
func findBash() (string, error) { return "bash", nil }
