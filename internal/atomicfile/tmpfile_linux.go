package atomicfile

import (
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed opens a new unnamed file in dir (O_TMPFILE). A variable: the
// fault-injection build (faults_linux.go) makes it refuse, as some file systems
// do.
var openUnnamed = func(dir string) (int, error) {
	return unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
}

// writeUnnamed replaces path with data written into an unnamed file in
// dir: it gets a name only when complete and synced, a temporary one
// (linkat cannot replace a name), which is then renamed over path. A kill
// while writing leaves nothing; a kill between the link and the rename
// leaves a complete temporary file, recorded in the journal like any.
// done is false, with nothing written, where the file system refuses
// unnamed files (EOPNOTSUPP; EISDIR and EINVAL from kernels and file
// systems that do not know the flag): the caller writes a named file.
func writeUnnamed(dir, path string, data []byte, mode iofs.FileMode) (done bool, err error) {
	fd, err := openUnnamed(dir)
	switch {
	case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EISDIR), errors.Is(err, unix.EINVAL):
		return false, nil
	case err != nil:
		return false, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed)"))
	defer f.Close()
	if err := fill(f, path, data, mode); err != nil {
		return false, err
	}
	tmp, err := reserve(dir, filepath.Base(path), func(p string) error { return linkUnnamed(fd, p) })
	var linkErr *os.LinkError
	if errors.As(err, &linkErr) {
		return false, nil // no way to name it here (no /proc, no privilege): write a named file
	}
	if err != nil {
		return false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return false, err
	}
	return true, nil
}

// linkUnnamed gives the unnamed file fd the name p: through /proc, which
// needs no privilege, else by the descriptor itself (AT_EMPTY_PATH, which
// needs CAP_DAC_READ_SEARCH), for a process without /proc.
func linkUnnamed(fd int, p string) error {
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, p, unix.AT_SYMLINK_FOLLOW)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		if err2 := unix.Linkat(fd, "", unix.AT_FDCWD, p, unix.AT_EMPTY_PATH); err2 == nil || errors.Is(err2, unix.EEXIST) {
			err = err2
		}
	}
	if errors.Is(err, unix.EEXIST) {
		return iofs.ErrExist
	}
	if err != nil {
		return &os.LinkError{Op: "link", Old: "(unnamed)", New: p, Err: err}
	}
	return nil
}
