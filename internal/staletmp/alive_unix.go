//go:build unix

package staletmp

import (
	"errors"
	"syscall"
)

// alive reports whether process pid runs (or may: one we may not signal).
func alive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
