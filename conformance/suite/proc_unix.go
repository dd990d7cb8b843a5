//go:build unix

package suite

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in its own process group, so killGroup also ends what
// the shell started (a `sleep` holding the output pipe open, say).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
