//go:build !unix

package mcpclient

import (
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

// Without process groups, stopping reaches the server process only.
func terminateGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func killGroup(pid int) { terminateGroup(pid) }
