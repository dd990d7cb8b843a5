package fs

import "syscall"

// fileHandle is what syscall.Open returns: a handle on Windows.
type fileHandle = syscall.Handle
