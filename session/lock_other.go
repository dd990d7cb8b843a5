//go:build !unix

package session

import "os"

// lockFile has no portable advisory lock to take here; on these systems the
// store relies on one acp-bridge process per state directory.
func lockFile(*os.File) error { return nil }
