//go:build !unix

package suite

import "os/exec"

// Without process groups, the command itself is what can be killed.
func ownGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
