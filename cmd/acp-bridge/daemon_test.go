//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemonCommand starts what nohup, daemonize and dev-server scripts do: a
// process in a session of its own (out of the command's process group),
// ignoring SIGTERM and SIGHUP, whose parent exits at once; its pid goes to
// daemon.pid. Then the command keeps running.
const daemonCommand = `(setsid bash -c 'trap "" TERM HUP; echo $$ > daemon.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &)
while [ ! -s daemon.pid ]; do sleep 0.01; done
echo started
sleep 300`

// TestDaemonEndsWithTheBridge: through the binary, the daemon a command
// started is gone after session/cancel, session/close, stdin EOF and
// SIGKILL of the bridge. Before the subreaper and the group marker it
// survived all four. How soon is logged, not asserted: on a quiet machine
// about a second (the cancel grace, bash.go, then SIGKILL), but a machine
// with its cores busy delays every step, and a test must not fail for that
// (it did, at 2 s, with a load of 28). The bound only tells "never" from
// "late".
func TestDaemonEndsWithTheBridge(t *testing.T) {
	args, _ := json.Marshal(map[string]string{"command": daemonCommand})
	response := `{"parts":[{"text":"Starting it."},{"tool_call":{"id":"d1","name":"bash","arguments":` + string(args) + `}}]}`
	tests := []struct {
		name string
		end  func(b *faultBridge, sid string)
	}{
		{"session/cancel", func(b *faultBridge, sid string) {
			b.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, sid))
		}},
		{"session/close", func(b *faultBridge, sid string) {
			b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"c","method":"session/close","params":{"sessionId":%q}}`, sid))
		}},
		{"stdin EOF", func(b *faultBridge, _ string) { b.stdin.Close() }},
		{"SIGKILL of the bridge", func(b *faultBridge, _ string) { b.cmd.Process.Kill() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := t.TempDir()
			script := writeScript(t, t.TempDir(), "script.json", response, `{"parts":[{"text":"done"}]}`)
			b := startFaultBridge(t, "--model", "script:"+script, "--permission-mode", "bypass")
			sid := b.newSession(work)
			if err := b.send(`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":` + promptParams(sid, "go") + `}`); err != nil {
				t.Fatal(err)
			}
			pid := awaitPidFile(t, filepath.Join(work, "daemon.pid"))
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			if p, ok := readProc(pid); ok && p.pgid != pid {
				t.Fatalf("the daemon is in group %d, not a session of its own: the test proves nothing", p.pgid)
			}
			at := time.Now()
			tt.end(b, sid)
			for running(pid) {
				if time.Since(at) > never {
					t.Fatalf("daemon %d still runs %v after %s", pid, never, tt.name)
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Logf("daemon gone %v after %s", time.Since(at).Round(time.Millisecond), tt.name)
			// The bridge adopted it (a subreaper): it must also collect
			// its exit, or a zombie is left per daemon until the bridge
			// exits.
			for {
				p, ok := readProc(pid)
				if !ok {
					break
				}
				if p.state == 'Z' && p.ppid == os.Getpid() {
					// The bridge was killed, and its orphans went to the
					// nearest subreaper: this test process, when a test
					// before ran the bridge in it (run enables the
					// subreaper), and it collects only its own commands'.
					// Reaping is then ours to do, not the dead bridge's.
					var ws syscall.WaitStatus
					syscall.Wait4(pid, &ws, 0, nil)
					continue
				}
				if time.Since(at) > never {
					p, _ := readProc(pid)
					t.Fatalf("daemon %d was never reaped: %+v (the bridge is %d)", pid, p, b.cmd.Process.Pid)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// awaitPidFile waits for a command to write its pid file.
func awaitPidFile(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && strings.HasSuffix(string(b), "\n") {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
	}
}

// running: the process exists and is not a zombie.
func running(pid int) bool {
	p, ok := readProc(pid)
	return ok && p.state != 'Z' && p.state != 'X'
}
