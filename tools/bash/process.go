package bash

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// signalGroup sends sig to every process in the group pgid. ESRCH (the
// group is already gone) is not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// groupAlive reports whether any process of the group still runs
// (zombies waiting for init to reap them do not count).
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return groupHasLiveMember(pgid)
}

// waitGroupGone polls until the group has no process left or d passes.
func waitGroupGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if !groupAlive(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// terminate stops the group while its leader may still run: SIGTERM to
// everyone, then SIGKILL if the leader has not exited within grace. The
// leader is waited for on exited (closed by the goroutine that reaps it), so
// its pid, and with it the group id, cannot be reused while we signal.
func terminate(pgid int, exited <-chan struct{}, grace time.Duration) {
	_ = signalGroup(pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
		// The shell is gone; stragglers get the same grace below.
		killStragglers(pgid, grace)
	case <-t.C:
		_ = signalGroup(pgid, syscall.SIGKILL)
		<-exited
	}
}

// killStragglers ends what is left of the group after its leader exited:
// background children the command started. Nothing of a command outlives its
// call. SIGTERM first, SIGKILL for whatever is left after grace.
//
// Once the leader is reaped its pid could in theory be reused as a new group
// id; that needs the pid space to wrap between the reap and this signal,
// while the group is empty, and then the signal would hit a stranger. The
// window is microseconds, and a non-empty group keeps its id reserved.
func killStragglers(pgid int, grace time.Duration) {
	if !groupAlive(pgid) {
		return
	}
	_ = signalGroup(pgid, syscall.SIGTERM)
	if waitGroupGone(pgid, grace) {
		return
	}
	_ = signalGroup(pgid, syscall.SIGKILL)
	waitGroupGone(pgid, time.Second)
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

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}

// signalName gives the conventional SIGxxx name the terminal pill shows.
func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("SIG%d", int(s))
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
