package procgroup

import "syscall"

// sysProcAttr makes the leader a process group of its own, and has the kernel
// kill it if the bridge dies before the watchdog knows of it. Pdeathsig fires
// when the thread that started the child exits; the Go runtime only retires
// threads locked with LockOSThread, which the bridge never does. It reaches
// the leader only: grandchildren are the watchdog's.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
