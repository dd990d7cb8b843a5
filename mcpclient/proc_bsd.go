//go:build unix && !linux

package mcpclient

import "syscall"

// sysProcAttr puts the server in its own process group. There is no
// parent-death signal here: a server outlives a bridge killed with SIGKILL
// until it notices its stdin closed.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
