//go:build atomicfile_faults

package atomicfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// ACP_BRIDGE_FAULT_NO_TMPFILE=1 in the fault-injection build: the file
// system refuses unnamed files, as some do (EOPNOTSUPP), so the named
// temporary file is used.
func init() {
	if os.Getenv("ACP_BRIDGE_FAULT_NO_TMPFILE") != "" {
		openUnnamed = func(string) (int, error) { return -1, unix.EOPNOTSUPP }
	}
}
