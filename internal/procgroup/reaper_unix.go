//go:build unix

package procgroup

import (
	"bufio"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The watchdog of this process, once EnableReaper has been called.
var (
	watchdogMu sync.Mutex
	watchdog   *reaper
)

// EnableReaper makes every group started from now on die with this process.
// argv runs RunReaper: the program itself in its reaper mode. The reaper
// starts with the first group, so a bridge that runs nothing costs nothing.
func EnableReaper(argv []string, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	watchdogMu.Lock()
	defer watchdogMu.Unlock()
	watchdog = &reaper{argv: argv, log: log, live: map[int]sysGroup{}}
	enableSubreaper(log)
}

// reaperFor is the watchdog, running, or nil when none is enabled.
func reaperFor() *reaper {
	watchdogMu.Lock()
	r := watchdog
	watchdogMu.Unlock()
	if r != nil {
		r.mu.Lock()
		r.ensure()
		r.mu.Unlock()
	}
	return r
}

// reaper is the bridge's side of the watchdog: the pipe to it, the groups
// and the journals it has been told of. Every change is one line: "+pgid
// token since" (the group, its marker and its start; see sysGroup),
// "-pgid", or "jPATH" (a journal of temporary files to clean up).
type reaper struct {
	argv []string
	log  *slog.Logger

	mu       sync.Mutex
	w        *os.File      // our end of the reaper's stdin; nil while none runs
	proc     *os.Process   // the running reaper
	exited   chan struct{} // closed when the running reaper has been reaped
	live     map[int]sysGroup
	journals []string
}

// WatchJournal has the watchdog clean up after this process's journal of
// temporary files (internal/atomicfile) if the process dies without doing
// so: a kill in the middle of a write. It starts the watchdog if none
// runs; it does nothing when none is enabled. A path with a line break is
// not passed on.
func WatchJournal(path string) {
	watchdogMu.Lock()
	r := watchdog
	watchdogMu.Unlock()
	if r == nil || strings.ContainsAny(path, "\n\r") {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.journals = append(r.journals, path)
	r.send("j" + path + "\n")
}

// StopReaper ends the watchdog at a clean exit: it kills what is still
// listed (normally nothing: every group was stopped), and is waited for, so
// no process of the bridge outlives it. Groups started later are not
// watched.
func StopReaper() {
	watchdogMu.Lock()
	r := watchdog
	watchdog = nil
	watchdogMu.Unlock()
	if r == nil {
		return
	}
	r.mu.Lock()
	w, proc, exited := r.w, r.proc, r.exited
	r.w = nil
	live := maps.Clone(r.live)
	r.mu.Unlock()
	if w == nil {
		return
	}
	w.Close()
	select {
	case <-exited:
		return
	case <-time.After(time.Second):
	}
	// A watchdog slow to exit (still starting, on a busy machine) is not
	// worth a hung shutdown, nor may it outlive the bridge: the bridge
	// does its work (kills what is still listed) and ends it. Not logged:
	// the bridge's log has ended by now.
	for _, g := range live {
		_ = signalGroup(g, syscall.SIGKILL)
	}
	_ = proc.Kill()
	<-exited
}

func (r *reaper) add(g sysGroup) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live[g.pgid] = g
	r.send(addLine(g))
}

func addLine(g sysGroup) string {
	return "+" + strconv.Itoa(g.pgid) + " " + g.token + " " + strconv.FormatUint(g.since, 10) + "\n"
}

func (r *reaper) remove(pgid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.live[pgid]; !ok {
		return
	}
	delete(r.live, pgid)
	r.send("-" + strconv.Itoa(pgid) + "\n")
}

// send writes one line; a reaper that died (killed on its own) is replaced,
// and the new one told of every live group.
func (r *reaper) send(line string) {
	r.ensure()
	if r.w == nil {
		return
	}
	if _, err := io.WriteString(r.w, line); err != nil {
		r.log.Warn("process watchdog gone; starting another", "err", err)
		r.w.Close()
		r.w = nil
		r.ensure() // tells the new one everything, this line included
	}
}

// ensure starts the reaper if none runs; r.mu is held.
func (r *reaper) ensure() {
	if r.w != nil {
		return
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		r.log.Error("process watchdog not started: commands may outlive a killed bridge", "err", err)
		return
	}
	cmd := exec.Command(r.argv[0], r.argv[1:]...)
	cmd.Stdin = pr // stdout and stderr: /dev/null; it has nothing to say
	cmd.Dir = "/"  // it must not keep a project's directory busy
	// Its own group: the editor's SIGKILL of the bridge's group must not
	// reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		r.log.Error("process watchdog not started: commands may outlive a killed bridge", "err", err)
		return
	}
	pr.Close()
	r.w, r.proc = pw, cmd.Process
	exited := make(chan struct{})
	r.exited = exited
	go func() {
		_ = cmd.Wait()
		close(exited)
		r.mu.Lock()
		if r.w == pw {
			r.log.Warn("process watchdog exited", "state", cmd.ProcessState.String())
			pw.Close()
			r.w = nil
		}
		r.mu.Unlock()
	}()
	for _, g := range r.live {
		if _, err := io.WriteString(pw, addLine(g)); err != nil {
			return // it died already; the next send starts another
		}
	}
	for _, j := range r.journals {
		if _, err := io.WriteString(pw, "j"+j+"\n"); err != nil {
			return
		}
	}
}

// RunReaper is the watchdog's whole program: it reads the bridge's lines
// until the pipe closes, which happens when the bridge exits or is killed
// (the kernel closes its end once no thread of the bridge runs), and then
// kills every group still listed: the process group and every process
// carrying the group's marker or descending from one that does (see
// members), whether it left the group or lost its parent. Then it gives
// clean, if not nil, the journals it was told of (WatchJournal): a bridge
// that exits cleanly has removed its own, so only a killed one's are left.
// It returns the exit status.
func RunReaper(in io.Reader, clean func(journals []string)) int {
	// A terminal's Ctrl-C or hang-up is for the bridge; the reaper must
	// outlive it long enough to clean up.
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	live, journals := readGroups(in)
	// A member may fork between the scan and the kill: scan again until
	// nothing is left, a bounded number of times.
	for range 10 {
		left := false
		for _, g := range live {
			_ = signalGroup(g, syscall.SIGKILL)
			left = left || groupAlive(g)
		}
		if !left {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if clean != nil && len(journals) > 0 {
		clean(journals)
	}
	return 0
}

// readGroups folds the bridge's lines into the set of live groups and the
// journals to clean, until the input ends. Lines it cannot read are
// skipped: the bridge wrote them. A "+pgid" line without marker and start
// (an older bridge) is a group found by its process group alone.
func readGroups(in io.Reader) (live map[int]sysGroup, journals []string) {
	live = map[int]sysGroup{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 {
			continue
		}
		if line[0] == 'j' {
			if !slices.Contains(journals, line[1:]) {
				journals = append(journals, line[1:])
			}
			continue
		}
		f := strings.Fields(line[1:])
		if len(f) == 0 {
			continue
		}
		pgid, err := strconv.Atoi(f[0])
		if err != nil || pgid <= 1 {
			continue // never kill(-1) or kill(0): everything, or ourselves
		}
		g := sysGroup{pgid: pgid}
		if len(f) == 3 {
			g.token = f[1]
			g.since, _ = strconv.ParseUint(f[2], 10, 64)
		}
		switch line[0] {
		case '+':
			live[pgid] = g
		case '-':
			delete(live, pgid)
		}
	}
	return live, journals
}
