//go:build unix

package session

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on an open log, so two acp-bridge
// processes never append to the same session (their sequence numbers would
// collide). The lock goes with the file descriptor: closing the file, or the
// process dying, releases it.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrBusy
	}
	return err
}
