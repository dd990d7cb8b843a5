package session

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockFile takes an exclusive lock on an open log, so two acp-bridge
// processes never append to the same session. Windows byte-range locks are
// mandatory (other handles could not read the locked bytes), so the lock is
// on one byte far past any real end of file, where no read ever goes. It
// goes with the handle: closing the file, or the process dying, releases it.
func lockFile(f *os.File) error {
	var ol windows.Overlapped
	ol.Offset, ol.OffsetHigh = 0xFFFFFFFE, 0x7FFFFFFF
	err := windows.LockFileEx(windows.Handle(f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return ErrBusy
	}
	return err
}
