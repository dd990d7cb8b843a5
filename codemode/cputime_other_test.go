//go:build !unix

package codemode

import "time"

// cpuTime is unavailable here; the CPU metrics then read 0.
func cpuTime() time.Duration { return 0 }
