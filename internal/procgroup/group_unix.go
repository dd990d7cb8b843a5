//go:build unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// sysGroup on Unix is the process group id (the leader's pid, Setpgid), the
// marker its processes carry, and the leader's start time (nothing of the
// group is older).
type sysGroup struct {
	pgid  int
	token string
	since uint64
}

func start(cmd *exec.Cmd) (*Group, error) {
	w := reaperFor()
	cmd.SysProcAttr = sysProcAttr()
	token := newToken()
	cmd.Env = withMarker(cmd.Env, token)
	if err := startLeader(cmd); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	// The leader is not reaped before Start returns (its caller waits), so
	// its start time is there to read.
	g := &Group{pid: pid, sysGroup: sysGroup{pgid: pid, token: token, since: startOf(pid)}}
	if w != nil {
		w.add(g.sysGroup)
	}
	return g, nil
}

// signal sends sig to the process group and to every other member: a
// process that left the group (setsid) but carries the marker or descends
// from a member. A member that ignores SIGTERM gets the SIGKILL that
// follows it.
func (g *Group) signal(kill bool) error {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	return signalGroup(g.sysGroup, sig)
}

func signalGroup(s sysGroup, sig syscall.Signal) error {
	err := syscall.Kill(-s.pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		err = nil
	}
	ps, lerr := listProcs(s.since)
	if lerr != nil {
		return err // no process table: the group is all we can reach
	}
	noteAdopted(ps)
	for _, pid := range members(ps, s.pgid, s.token) {
		_ = syscall.Kill(pid, sig)
	}
	return err
}

func (g *Group) alive() bool { return groupAlive(g.sysGroup) }

// groupAlive reports whether a member still runs; zombies (killed, not yet
// reaped by their parent) do not count.
func groupAlive(s sysGroup) bool {
	ps, err := listProcs(s.since)
	if err != nil {
		err := syscall.Kill(-s.pgid, 0)
		return err == nil || errors.Is(err, syscall.EPERM)
	}
	noteAdopted(ps)
	return len(members(ps, s.pgid, s.token)) > 0
}

func (g *Group) release() {
	leaderGone(g.pid)
	if w := reaperFor(); w != nil {
		w.remove(g.pgid)
	}
}

// Exists reports whether a process with this pid runs (or is a zombie).
func Exists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
