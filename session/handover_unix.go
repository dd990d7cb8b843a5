//go:build unix

package session

import "syscall"

// HandOverSignal is the signal that tells a process to look at the
// hand-over requests for the logs it holds (Agent.HandOverRequested).
const HandOverSignal = syscall.SIGUSR1

func signalHandOver(pid int) error { return syscall.Kill(pid, HandOverSignal) }
