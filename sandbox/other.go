//go:build !linux && !darwin

package sandbox

import (
	"os/exec"
	"runtime"
)

func probe() Support {
	return Support{Reason: "there is no sandbox for commands on " + runtime.GOOS + " (Linux has Landlock, macOS sandbox-exec)"}
}

func wrap(*exec.Cmd, *Policy) error { return ErrUnavailable }

func confineAndExec(*Policy, string, []string) error { return ErrUnavailable }
