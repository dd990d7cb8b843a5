//go:build unix

package codemode

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used (user + system). On a
// shared, loaded machine it measures cost where wall time measures waiting.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
