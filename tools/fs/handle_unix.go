//go:build unix

package fs

// fileHandle is what syscall.Open returns: a descriptor on Unix.
type fileHandle = int
