//go:build unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// sysGroup on Unix is the process group id: the leader's pid (Setpgid).
type sysGroup struct{ pgid int }

func start(cmd *exec.Cmd) (*Group, error) {
	w := reaperFor()
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &Group{pid: cmd.Process.Pid, sysGroup: sysGroup{pgid: cmd.Process.Pid}}
	if w != nil {
		w.add(g.pgid)
	}
	return g, nil
}

func (g *Group) signal(kill bool) error {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	err := syscall.Kill(-g.pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

func (g *Group) alive() bool {
	err := syscall.Kill(-g.pgid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return groupHasLiveMember(g.pgid)
}

func (g *Group) release() {
	if w := reaperFor(); w != nil {
		w.remove(g.pgid)
	}
}

// Exists reports whether a process with this pid runs (or is a zombie).
func Exists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
