//go:build atomicfile_faults

package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The fault-injection build (go build -tags atomicfile_faults), for the
// tests that kill the bridge in the middle of a write (cmd/acp-bridge
// midwrite_test.go); never in a release. ACP_BRIDGE_FAULT_PAUSE_WRITE=
// NAME=FIFO: a write of a file named NAME stops with half of its content
// written, says "paused" into the FIFO (opening it waits for the test to
// read) and waits there to be killed.
func init() {
	name, fifo, ok := strings.Cut(os.Getenv("ACP_BRIDGE_FAULT_PAUSE_WRITE"), "=")
	if !ok {
		return
	}
	midWrite = func(path string) {
		if filepath.Base(path) != name {
			return
		}
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.WriteString("paused\n")
			f.Close()
		}
		for {
			time.Sleep(time.Hour)
		}
	}
}
