package procgroup

import "syscall"

// sysProcAttr makes the leader a process group of its own. macOS has no
// parent-death signal and no subreaper: the watchdog alone ends the group
// when the bridge dies, finding its members by marker (see tree.go).
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
