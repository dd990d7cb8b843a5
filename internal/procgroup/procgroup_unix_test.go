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
		os.Exit(RunReaper(os.Stdin))
	case "bridge", "bridge-unguarded":
		os.Exit(playBridge(os.Getenv(roleEnv) == "bridge"))
	}
	os.Exit(m.Run())
}

// playBridge starts a command that leaves a grandchild in its group, prints
// the group id, and waits to be killed.
func playBridge(guarded bool) int {
	if guarded {
		os.Setenv(roleEnv, "reaper") // what the watchdog will run as
		EnableReaper([]string{os.Args[0]}, nil)
	}
	g, err := Start(exec.Command("sh", "-c", "sleep 30 & sleep 30"))
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
// command and the command's background child run: with the watchdog the
// whole group is gone within 2 s; without it the background child (in a
// group the kernel's parent-death signal never reaches) runs on, which is
// what the watchdog is for.
func TestKilledBridgeTakesItsGroups(t *testing.T) {
	for _, tt := range []struct {
		role     string
		wantGone bool
	}{
		{"bridge", true},
		{"bridge-unguarded", false},
	} {
		t.Run(tt.role, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), roleEnv+"="+tt.role)
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
			cmd.Process.Kill()
			cmd.Wait()
			if gone := groupGone(pgid, 2*time.Second); gone != tt.wantGone {
				t.Errorf("group %d gone within 2s after SIGKILL of the bridge: %v, want %v", pgid, gone, tt.wantGone)
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
	}
	for _, tt := range tests {
		got := slices.Sorted(maps.Keys(readGroups(strings.NewReader(tt.in))))
		if !slices.Equal(got, tt.want) {
			t.Errorf("readGroups(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
