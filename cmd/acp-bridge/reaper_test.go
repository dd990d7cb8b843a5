//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// awaitGone polls until none of ps runs, or d passes, and returns what
// still runs then.
func awaitGone(ps []proc, d time.Duration) []proc {
	deadline := time.Now().Add(d)
	for {
		left := stillRunning(ps)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestKilledBridgeLeavesNothing kills the bridge with SIGKILL, as Zed stops
// an agent (no SIGTERM, no stdin EOF), while a bash command and its
// background child sleep: soon after, nothing the bridge started runs (the
// command's group, the background child, the watchdog itself); how soon is
// logged, not asserted (under 100 ms on a quiet machine; a 2 s bound failed
// at load 25, the race-built watchdog slow to run). The next bridge removes
// the dead one's spill directory, beside its start-up.
func TestKilledBridgeLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the bridges' spill directories go here
	args, _ := json.Marshal(map[string]string{"command": "sleep 30 & sleep 30"})
	script := writeScript(t, t.TempDir(), "script.json",
		`{"parts":[{"text":"Running it."},{"tool_call":{"id":"b1","name":"bash","arguments":`+string(args)+`}}]}`)
	b := startFaultBridge(t, "--model", "script:"+script, "--permission-mode", "bypass")
	sid := b.newSession(t.TempDir())
	if err := b.send(`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":` + promptParams(sid, "go") + `}`); err != nil {
		t.Fatal(err)
	}
	pid := b.cmd.Process.Pid
	before := awaitChildren(t, pid, 2, "sleep")
	spills, _ := filepath.Glob(filepath.Join(tmp, fmt.Sprintf("acp-bridge-output-%d-*", pid)))
	if len(spills) != 1 {
		t.Fatalf("spill directories of the bridge: %v", spills)
	}
	var comms []string
	for _, p := range before {
		comms = append(comms, p.comm)
	}
	t.Logf("under the bridge before the kill: %v", comms)

	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-b.exited
	if left := awaitGone(before, never); len(left) > 0 {
		t.Errorf("still running %v after the bridge was killed: %+v", never, left)
		for _, p := range left {
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
	} else {
		t.Logf("all %d processes gone %v after the kill", len(before), time.Since(killed).Round(100*time.Microsecond))
	}

	if _, err := os.Stat(spills[0]); err != nil {
		t.Fatalf("the killed bridge's spill directory went before a new bridge started: %v", err)
	}
	next := startFaultBridge(t, "--model", "script:"+script)
	next.newSession(t.TempDir())
	// The sweep runs beside start-up, not before the first answer.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, err := os.Stat(spills[0])
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the dead bridge's spill directory %s is still there 5 s after the next bridge started (%v)", spills[0], err)
			break
		}
	}
	own, _ := filepath.Glob(filepath.Join(tmp, fmt.Sprintf("acp-bridge-output-%d-*", next.cmd.Process.Pid)))
	if len(own) != 1 {
		t.Errorf("the new bridge's own spill directory: %v", own)
	}
}

// TestSpillsOfLiveBridgesStay: only directories whose pid is gone are
// removed; a live process's, and names that carry no pid, stay.
func TestSpillsOfLiveBridgesStay(t *testing.T) {
	tmp := t.TempDir()
	dead := deadPid(t)
	names := map[string]bool{ // name: removed
		fmt.Sprintf("acp-bridge-output-%d-123", dead):         true,
		fmt.Sprintf("acp-bridge-output-%d-9", os.Getppid()):   false,
		fmt.Sprintf("acp-bridge-output-%d-9", os.Getpid()):    false,
		"acp-bridge-output-3344817":                           false, // the old, pid-less form
		"acp-bridge-output-x-1":                               false,
		fmt.Sprintf("acp-bridge-output-%d-file", dead) + ".x": false, // a file, not a directory
	}
	for n := range names {
		p := filepath.Join(tmp, n)
		var err error
		if strings.HasSuffix(n, ".x") {
			err = os.WriteFile(p, nil, 0o600)
		} else {
			err = os.MkdirAll(filepath.Join(p, "sub"), 0o700)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	removeDeadSpills(tmp, slog.New(slog.DiscardHandler))
	for n, removed := range names {
		_, err := os.Lstat(filepath.Join(tmp, n))
		if gone := os.IsNotExist(err); gone != removed {
			t.Errorf("%s removed: %v, want %v", n, gone, removed)
		}
	}
}

// deadPid is a pid no process has: that of a child that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skip(err)
	}
	p.Wait()
	return p.Pid
}
