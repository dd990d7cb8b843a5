package bash

import (
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/acp-bridge/acp-bridge/internal/procgroup"
)

// waitGroupGone polls until the group has no process left or d passes.
// With again set (after SIGKILL), each look sends again what it sent
// before: a member one scan of the process table missed (forked just after
// it, or in the middle of an exec, when its environment and so its marker
// cannot be read for that instant) is found by the next.
func waitGroupGone(g *procgroup.Group, d time.Duration, again func() error) bool {
	deadline := time.Now().Add(d)
	for {
		if !g.Alive() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
		if again != nil {
			_ = again()
		}
	}
}

// terminate stops the group while its leader may still run: SIGTERM to
// every member, then SIGKILL to whatever still runs (the leader, or a member
// that ignores SIGTERM, such as a daemon) once grace has passed. The leader
// is waited for on exited (closed by the goroutine that reaps it), so its
// pid, and with it the group id, cannot be reused while we signal.
func terminate(g *procgroup.Group, exited <-chan struct{}, grace time.Duration) {
	_ = g.Terminate()
	deadline := time.Now().Add(grace)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
		// The shell is gone; the rest of the group gets what is left of
		// the same grace, not a second one.
		if waitGroupGone(g, time.Until(deadline), nil) {
			return
		}
	case <-t.C:
	}
	_ = g.Kill()
	<-exited
	waitGroupGone(g, time.Second, g.Kill)
}

// killStragglers ends what is left of the group after its leader exited:
// background children the command started. Nothing of a command outlives its
// call. SIGTERM first, SIGKILL for whatever is left after grace.
//
// Once the leader is reaped its pid could in theory be reused as a new group
// id; that needs the pid space to wrap between the reap and this signal,
// while the group is empty, and then the signal would hit a stranger. The
// window is microseconds, and a non-empty group keeps its id reserved.
func killStragglers(g *procgroup.Group, grace time.Duration) {
	if !g.Alive() {
		return
	}
	_ = g.Terminate()
	if waitGroupGone(g, grace, nil) {
		return
	}
	_ = g.Kill()
	waitGroupGone(g, time.Second, g.Kill)
}

// exitStatus reads the exit code or the killing signal from a reaped process.
func exitStatus(ps *os.ProcessState) (code *int, signal string) {
	if ps == nil {
		return nil, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return nil, signalName(ws.Signal())
	}
	c := ps.ExitCode()
	return &c, ""
}

// scrubbedEnv is the ambient environment without anything that looks like a
// credential, plus the settings that keep tools from paging or colouring.
func scrubbedEnv() []string {
	forced := []string{"NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat"}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if secretName(name) || overridden(name, forced) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, forced...)
}

func secretName(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"KEY", "SECRET", "TOKEN", "PASSWORD"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

func overridden(name string, forced []string) bool {
	for _, f := range forced {
		if strings.HasPrefix(f, name+"=") {
			return true
		}
	}
	return false
}
