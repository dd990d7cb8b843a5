//go:build unix

package mcpclient

import "syscall"

// terminateGroup asks the server and everything it started to stop.
func terminateGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGTERM) }

// killGroup kills the server's process group. The server leads its own group
// (Setpgid), so this reaches grandchildren without touching the bridge.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
