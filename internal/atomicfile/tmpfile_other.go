//go:build !linux

package atomicfile

import iofs "io/fs"

// writeUnnamed: unnamed files are Linux's (O_TMPFILE); elsewhere the named
// temporary file and its journal entry are the way (atomicfile.go).
func writeUnnamed(string, string, []byte, iofs.FileMode) (bool, error) { return false, nil }
