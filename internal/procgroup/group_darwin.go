package procgroup

import "syscall"

// sysProcAttr makes the leader a process group of its own. macOS has no
// parent-death signal: the watchdog alone ends the group when the bridge dies.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// groupHasLiveMember: without /proc, a member that kill(2) still finds counts
// (a zombie too, until init reaps it; launchd reaps at once).
func groupHasLiveMember(int) bool { return true }
