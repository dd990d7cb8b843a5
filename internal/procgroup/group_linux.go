package procgroup

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// sysProcAttr makes the leader a process group of its own, and has the kernel
// kill it if the bridge dies before the watchdog knows of it. Pdeathsig fires
// when the thread that started the child exits; the Go runtime only retires
// threads locked with LockOSThread, which the bridge never does. It reaches
// the leader only: grandchildren are the watchdog's.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// groupHasLiveMember reports whether a process of group pgid is still
// running. kill(-pgid, 0) also counts zombies: orphans that were killed but
// that init has not reaped yet (some container inits reap slowly, or never),
// which would make every wait for a group wait out its deadline. /proc tells
// them apart.
func groupHasLiveMember(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return true // no /proc: trust kill(2)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	want := []byte(strconv.Itoa(pgid))
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so parse
		// after the last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) >= 3 && bytes.Equal(f[2], want) && f[0][0] != 'Z' && f[0][0] != 'X' {
			return true
		}
	}
	return false
}
