//go:build windows

package session

import "syscall"

// HandOverSignal is never sent on Windows (no user signals): a session held
// by another process is refused with what to do instead.
const HandOverSignal = syscall.Signal(0)

func signalHandOver(pid int) error { return ErrHandOverUnsupported }
