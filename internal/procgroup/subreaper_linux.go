package procgroup

import (
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The bridge is a child subreaper (PR_SET_CHILD_SUBREAPER): a process its
// commands start and then abandon (a daemon's parent exits) becomes the
// bridge's child instead of init's, so it stays in the bridge's view and
// its exit status is the bridge's to collect. Orphans that carry one of
// this bridge's markers are collected here; the groups' first processes
// are not, their exec.Cmd waits for them.
var adoption struct {
	mu      sync.Mutex
	leaders map[int]bool // first processes of groups, waited for by their Cmd
	adopted map[int]bool // orphans of our groups that became our children
}

// startLeader starts cmd, the first process of a group, and lists it as a
// leader before any look for orphans can see it: the lock is held from
// before the fork, so a SIGCHLD that comes in between (another command's
// exit) cannot take the new child, ours and marked, for an adopted orphan
// and reap it, stealing the exit status its Cmd waits for.
func startLeader(cmd *exec.Cmd) error {
	adoption.mu.Lock()
	defer adoption.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	if adoption.leaders == nil {
		adoption.leaders = map[int]bool{}
	}
	adoption.leaders[cmd.Process.Pid] = true
	return nil
}

func leaderGone(pid int) {
	adoption.mu.Lock()
	delete(adoption.leaders, pid)
	adoption.mu.Unlock()
}

var subreaperOnce sync.Once

// enableSubreaper makes this process the subreaper of what it starts and
// collects the orphans it adopts whenever a child exits.
func enableSubreaper(log *slog.Logger) {
	subreaperOnce.Do(func() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			log.Warn("not a subreaper: a command's orphans go to init (the marker still finds them)", "err", err)
			return
		}
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGCHLD)
		go func() {
			for range ch {
				collectAdopted()
			}
		}()
	})
}

// noteAdopted records the adopted orphans among ps (a scan made to signal
// or check a group), so that their exit is collected even when it comes
// before collectAdopted sees them alive.
func noteAdopted(ps []procInfo) {
	me := os.Getpid()
	prefix := strconv.Itoa(me) + "."
	adoption.mu.Lock()
	defer adoption.mu.Unlock()
	for _, p := range ps {
		if p.ppid == me && p.live && !adoption.leaders[p.pid] && strings.HasPrefix(p.token, prefix) {
			if adoption.adopted == nil {
				adoption.adopted = map[int]bool{}
			}
			adoption.adopted[p.pid] = true
		}
	}
}

// collectAdopted notes the children of ours that carry one of our markers
// and are not groups' first processes (adopted orphans), and reaps those
// that exited. An orphan that exits before it was ever seen alive stays a
// zombie until the bridge exits: its environment can no longer tell whose
// it is, and reaping a child some exec.Cmd waits for would steal its status.
func collectAdopted() {
	me := os.Getpid()
	prefix := strconv.Itoa(me) + "."
	d, err := os.Open("/proc")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	adoption.mu.Lock()
	defer adoption.mu.Unlock()
	if adoption.adopted == nil {
		adoption.adopted = map[int]bool{}
	}
	buf := make([]byte, 1024)
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		// One buffer and raw reads, as listProcs: this runs for every
		// process on the machine at every child's exit.
		p, ok := parseStat(n, readProcFile("/proc/"+n+"/stat", &buf))
		if !ok || p.ppid != me || !p.live || adoption.leaders[p.pid] || adoption.adopted[p.pid] {
			continue
		}
		if env, err := os.ReadFile("/proc/" + n + "/environ"); err == nil && strings.HasPrefix(markerIn(env), prefix) {
			adoption.adopted[p.pid] = true
		}
	}
	for pid := range adoption.adopted {
		var ws syscall.WaitStatus
		if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == pid || err != nil {
			delete(adoption.adopted, pid)
		}
	}
}
