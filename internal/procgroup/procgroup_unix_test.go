//go:build unix

package procgroup

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const roleEnv = "PROCGROUP_TEST_ROLE"

// TestMain lets the test binary play the bridge and its reaper.
func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "reaper":
		os.Exit(RunReaper(os.Stdin, nil))
	case "slow-reaper": // reads the bridge's lines, then does not exit
		readGroups(os.Stdin)
		time.Sleep(30 * time.Second)
		os.Exit(0)
	case "bridge", "bridge-unguarded":
		os.Exit(playBridge(os.Getenv(roleEnv) == "bridge", os.Getenv("PROCGROUP_TEST_PIDFILE")))
	}
	os.Exit(m.Run())
}

// daemonCmd leaves a grandchild in the group and a daemon outside it: its
// own session (setsid), ignoring SIGTERM and SIGHUP, its pid written to
// pidFile; the parent that started it exits at once, so it is an orphan.
func daemonCmd(pidFile string) *exec.Cmd {
	return exec.Command("sh", "-c", `(setsid sh -c 'trap "" TERM HUP; echo $$ > "$0"; exec sleep 30' "$1" </dev/null >/dev/null 2>&1 &) ; sleep 30 & sleep 30`, "sh", pidFile)
}

// readPid waits for a pid file to be written.
func readPid(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && strings.HasSuffix(string(b), "\n") {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
	}
}

// running reports whether pid runs (a zombie does not).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Exists(pid) // no /proc (macOS): kill(2) says
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// gone polls until pid no longer runs or d passes.
func gone(pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); running(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// TestDaemonIsAMember: a setsid'd daemon that ignores SIGTERM and whose
// parent exited is still the group's: Alive sees it after the rest of the
// group ended, Terminate does not end it (it ignores SIGTERM), Kill does.
func TestDaemonIsAMember(t *testing.T) {
	pidFile := t.TempDir() + "/daemon.pid"
	cmd := daemonCmd(pidFile)
	g, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	daemon := readPid(t, pidFile)
	t.Cleanup(func() { syscall.Kill(daemon, syscall.SIGKILL) })
	syscall.Kill(-g.Pid(), syscall.SIGKILL) // the group, not the daemon
	cmd.Wait()
	if !running(daemon) {
		t.Fatal("the daemon died with its old group: the test proves nothing")
	}
	if !g.Alive() {
		t.Error("Alive is false while the daemon runs")
	}
	g.Terminate()
	if gone(daemon, 300*time.Millisecond) {
		t.Fatal("the daemon died of SIGTERM, which it ignores")
	}
	g.Kill()
	if !gone(daemon, 2*time.Second) {
		t.Error("the daemon survived Kill")
	}
	if g.Alive() {
		t.Error("Alive is true after Kill")
	}
	g.Release()
}

// playBridge starts a command that leaves a grandchild in its group, prints
// the group id, and waits to be killed.
func playBridge(guarded bool, pidFile string) int {
	if guarded {
		os.Setenv(roleEnv, "reaper") // what the watchdog will run as
		EnableReaper([]string{os.Args[0]}, nil)
	}
	g, err := Start(daemonCmd(pidFile))
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println(g.Pid())
	time.Sleep(time.Minute)
	return 0
}

// groupGone polls until no live process is in group pgid, or d passes.
func groupGone(pgid int, d time.Duration) bool {
	g := &Group{pid: pgid, sysGroup: sysGroup{pgid: pgid}}
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if !g.Alive() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// groupSize counts the processes of group pgid that ps lists.
func groupSize(t *testing.T, pgid int) int {
	out, err := exec.Command("ps", "-A", "-o", "pgid=").Output()
	if err != nil {
		t.Skipf("ps: %v", err)
	}
	n := 0
	for _, f := range strings.Fields(string(out)) {
		if f == strconv.Itoa(pgid) {
			n++
		}
	}
	return n
}

// TestKilledBridgeTakesItsGroups kills a bridge with SIGKILL while its
// command, the command's background child and a daemon it started (its own
// session, ignoring SIGTERM, orphaned) run: with the watchdog all of them
// are gone within 2 s; without it the background child and the daemon (out
// of the kernel's parent-death signal's reach) run on, which is what the
// watchdog is for.
func TestKilledBridgeTakesItsGroups(t *testing.T) {
	for _, tt := range []struct {
		role     string
		wantGone bool
	}{
		{"bridge", true},
		{"bridge-unguarded", false},
	} {
		t.Run(tt.role, func(t *testing.T) {
			pidFile := t.TempDir() + "/daemon.pid"
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), roleEnv+"="+tt.role, "PROCGROUP_TEST_PIDFILE="+pidFile)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the editor's group, not ours
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				cmd.Process.Kill()
				t.Fatalf("bridge: %v", err)
			}
			pgid, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				cmd.Process.Kill()
				t.Fatalf("bridge said %q", line)
			}
			t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
			for deadline := time.Now().Add(5 * time.Second); groupSize(t, pgid) < 3; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("group %d never had sh and two sleeps", pgid)
				}
			}
			daemon := readPid(t, pidFile)
			t.Cleanup(func() { syscall.Kill(daemon, syscall.SIGKILL) })
			cmd.Process.Kill()
			cmd.Wait()
			if gone := groupGone(pgid, 2*time.Second); gone != tt.wantGone {
				t.Errorf("group %d gone within 2s after SIGKILL of the bridge: %v, want %v", pgid, gone, tt.wantGone)
			}
			if ok := gone(daemon, 2*time.Second); ok != tt.wantGone {
				t.Errorf("setsid'd daemon %d gone within 2s after SIGKILL of the bridge: %v, want %v", daemon, ok, tt.wantGone)
			}
		})
	}
}

// TestReaperReplaced: a watchdog killed on its own is replaced at the next
// change and told of every live group, so closing the pipe (what the kernel
// does when the bridge dies) still kills them all.
func TestReaperReplaced(t *testing.T) {
	t.Setenv(roleEnv, "reaper")
	EnableReaper([]string{os.Args[0]}, nil)
	t.Cleanup(func() { watchdogMu.Lock(); watchdog = nil; watchdogMu.Unlock() })
	var groups []*Group
	for range 2 {
		g, err := Start(exec.Command("sh", "-c", "sleep 30 & sleep 30"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Kill() })
		groups = append(groups, g)
		if len(groups) == 1 {
			// Kill the first watchdog: reaperPid finds it by its pipe.
			r := reaperFor()
			r.mu.Lock()
			first := r.w
			r.mu.Unlock()
			pid := reaperPid(t, r)
			syscall.Kill(pid, syscall.SIGKILL)
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				r.mu.Lock()
				replaced := r.w != first
				r.mu.Unlock()
				if replaced {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the bridge never noticed its watchdog died")
				}
			}
		}
	}
	r := reaperFor()
	r.mu.Lock()
	r.w.Close() // the bridge "dies"
	r.w = nil
	r.mu.Unlock()
	for _, g := range groups {
		if !groupGone(g.Pid(), 2*time.Second) {
			t.Errorf("group %d still runs after the pipe closed", g.Pid())
		}
	}
}

// TestStopReaperEndsASlowWatchdog: a watchdog that does not exit when the
// bridge stops it (here: never; on a busy machine: still starting) does not
// outlive the bridge: StopReaper kills the groups still listed and the
// watchdog, and returns when it is gone.
func TestStopReaperEndsASlowWatchdog(t *testing.T) {
	t.Setenv(roleEnv, "slow-reaper")
	EnableReaper([]string{os.Args[0]}, nil)
	t.Cleanup(func() { watchdogMu.Lock(); watchdog = nil; watchdogMu.Unlock() })
	g, err := Start(exec.Command("sh", "-c", "sleep 30 & sleep 30"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Kill() })
	r := reaperFor()
	pid := reaperPid(t, r)
	StopReaper()
	if running(pid) {
		t.Errorf("the watchdog %d still runs after StopReaper returned", pid)
	}
	if !groupGone(g.Pid(), 2*time.Second) {
		t.Errorf("group %d still runs after StopReaper", g.Pid())
	}
}

// reaperPid finds the running watchdog: the child of this process that runs
// the test binary in reaper mode.
func reaperPid(t *testing.T, r *reaper) int {
	t.Helper()
	out, err := exec.Command("ps", "-A", "-o", "pid=,ppid=,pgid=").Output()
	if err != nil {
		t.Skipf("ps: %v", err)
	}
	me := strconv.Itoa(os.Getpid())
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		// The watchdog leads its own group; commands do too but run sh.
		if len(f) == 3 && f[1] == me && f[0] == f[2] {
			pid, _ := strconv.Atoi(f[0])
			if comm, _ := exec.Command("ps", "-o", "args=", "-p", f[0]).Output(); strings.Contains(string(comm), os.Args[0]) {
				return pid
			}
		}
	}
	t.Fatal("no watchdog process found")
	return 0
}

func TestReadGroups(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"", nil},
		{"+10\n+11\n-10\n", []int{11}},
		{"+10\n-10\n+10\n", []int{10}},
		{"-5\n+7", []int{7}},                           // a last line without newline counts
		{"+1\n+0\n+-3\n+x\n\n+\n?9\n+12\n", []int{12}}, // never init, ourselves, or garbage
		{"+10 7.1 500\n+11 7.2 600\n-11\n", []int{10}},
	}
	for _, tt := range tests {
		live, _ := readGroups(strings.NewReader(tt.in))
		got := slices.Sorted(maps.Keys(live))
		if !slices.Equal(got, tt.want) {
			t.Errorf("readGroups(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	live, _ := readGroups(strings.NewReader(addLine(sysGroup{pgid: 42, token: "9.3", since: 1234})))
	g := live[42]
	if g != (sysGroup{pgid: 42, token: "9.3", since: 1234}) {
		t.Errorf("addLine does not read back: %+v", g)
	}
}

// TestReaperCleansJournals: the journals the bridge named ("jPATH" lines,
// each once however often named) go to the clean-up when the input ends.
func TestReaperCleansJournals(t *testing.T) {
	var got []string
	RunReaper(strings.NewReader("j/s/1.tmpfiles\n+0\nj/t/1.tmpfiles\nj/s/1.tmpfiles\n"), func(j []string) { got = j })
	if want := []string{"/s/1.tmpfiles", "/t/1.tmpfiles"}; !slices.Equal(got, want) {
		t.Errorf("cleaned %q, want %q", got, want)
	}
}
