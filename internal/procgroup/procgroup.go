// Package procgroup starts the commands and servers the bridge runs as
// groups: a process and everything it starts, signalled as one, and sure to
// die with the bridge however the bridge dies.
//
// Editors stop an agent with SIGKILL (Zed kills its process group, with no
// SIGTERM and no stdin EOF first), so nothing the bridge does at exit can be
// relied on. Each platform has its own sure mechanism:
//
//   - Unix: each group is a process group of its own (so a timeout or a
//     cancel can kill a command's grandchildren), which also takes it out of
//     the editor's reach, and a marker in the environment its processes
//     inherit (tree.go), so a process that left the group and lost its
//     parent (a setsid'd daemon) is still found: ending a group signals the
//     process group and every process carrying the marker or descending
//     from one that does. On Linux the bridge is also the subreaper of what
//     it starts (subreaper_linux.go) and reaps the orphans it adopts. A
//     watchdog, the bridge binary re-executed in reaper
//     mode (see [EnableReaper] and [RunReaper]), holds a pipe from the bridge
//     and a list of the live groups; when the pipe closes, the bridge is
//     gone, and it kills every member of every group on the list. On Linux the leader also
//     gets a parent-death signal, which covers the instant between its start
//     and its registration.
//   - Windows: each group is a Job Object that kills its processes when its
//     last handle closes; the bridge holds the only handle, and the kernel
//     closes it when the bridge dies.
package procgroup

import (
	"os/exec"
	"sync"
)

// Group is one started command and everything it starts.
type Group struct {
	pid      int
	once     sync.Once
	sysGroup // the platform's handle on the group (Windows: its job)
}

// Start starts cmd as the first process of a new group. cmd.SysProcAttr is
// set by Start (anything there before is replaced). Call Release once the
// group is done with, after its processes are gone.
func Start(cmd *exec.Cmd) (*Group, error) {
	return start(cmd)
}

// Pid is the group's first process; on Unix it is also the group id.
func (g *Group) Pid() int { return g.pid }

// Terminate asks every process of the group to stop (SIGTERM). Windows has
// no such request for console programs: there it kills, like Kill.
func (g *Group) Terminate() error { return g.signal(false) }

// Kill kills every process of the group. A group already gone is not an
// error.
func (g *Group) Kill() error { return g.signal(true) }

// Alive reports whether a process of the group still runs (zombies, killed
// but not yet reaped by init, do not count).
func (g *Group) Alive() bool { return g.alive() }

// Release forgets the group: the watchdog no longer kills it when the
// bridge dies. Call it when the group's processes are gone (a later process
// could reuse the group's id). It is safe to call more than once.
func (g *Group) Release() { g.once.Do(g.release) }
