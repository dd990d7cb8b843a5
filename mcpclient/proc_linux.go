//go:build linux

package mcpclient

import "syscall"

// sysProcAttr puts the server in its own process group, and has the kernel
// kill it if the bridge dies without stopping it (SIGKILL, a crash), so no
// server outlives the editor's agent. Pdeathsig fires when the thread that
// started the child exits; the Go runtime only retires threads locked with
// LockOSThread, which nothing here does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
