package fs

import (
	"bytes"
	"encoding/binary"
	iofs "io/fs"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openDir is a directory open for listing, read with getdents64 on the raw
// descriptor: os.Open would make it non-blocking and try to register it
// with the poller (three fcntl and an epoll_ctl that fails), and
// os.File.ReadDir allocates an entry object per name. A search of a large
// tree opens thousands of directories, and on a virtual machine every
// system call counts.
type openDir struct{ fd int }

func openDirectory(abs string) (openDir, error) {
	for {
		fd, err := syscall.Open(abs, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return openDir{}, &os.PathError{Op: "open", Path: abs, Err: err}
		}
		return openDir{fd}, nil
	}
}

func (d openDir) close() { syscall.Close(d.fd) }

// holdDirs: a file is opened by its name in its open directory (openat),
// so the walk keeps directories open for grep (walkOptions.openFiles).
const holdDirs = true

// open opens the regular file name in the directory, read-only, without
// following a symlink (the walk listed a regular file; one swapped in for
// it since is refused, not followed out of the tree). buf is the caller's,
// reused for the NUL-terminated name: syscall.Open allocates one for every
// file, and grep opens every file of a tree.
func (d openDir) open(name string, buf *[]byte) (fileHandle, error) {
	b := append(append((*buf)[:0], name...), 0)
	*buf = b
	for {
		fd, _, errno := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(d.fd), uintptr(unsafe.Pointer(&b[0])),
			syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0, 0, 0)
		switch errno {
		case 0:
			return int(fd), nil
		case syscall.EINTR:
			continue
		}
		return -1, errno
	}
}

// entries lists the directory (without "." and ".."), using buf for the
// system call.
func (d openDir) entries(buf []byte) ([]dirEntry, error) {
	var out []dirEntry
	for {
		n, err := syscall.ReadDirent(d.fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		for b := buf[:n]; len(b) >= 19; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			typ, name := b[18], b[19:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) == 0 || name[0] == '.' && (len(name) == 1 || len(name) == 2 && name[1] == '.') {
				continue
			}
			e := dirEntry{name: string(name)}
			switch typ {
			case syscall.DT_REG:
			case syscall.DT_DIR:
				e.typ = iofs.ModeDir
			case syscall.DT_LNK:
				e.typ = iofs.ModeSymlink
			case syscall.DT_FIFO:
				e.typ = iofs.ModeNamedPipe
			case syscall.DT_SOCK:
				e.typ = iofs.ModeSocket
			case syscall.DT_CHR:
				e.typ = iofs.ModeDevice | iofs.ModeCharDevice
			case syscall.DT_BLK:
				e.typ = iofs.ModeDevice
			default: // DT_UNKNOWN: the file system does not say
				var st unix.Stat_t
				if unix.Fstatat(d.fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					continue // gone since it was listed
				}
				e.typ = modeOf(st.Mode)
			}
			out = append(out, e)
		}
	}
}

func modeOf(m uint32) iofs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return iofs.ModeDir
	case syscall.S_IFLNK:
		return iofs.ModeSymlink
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFIFO:
		return iofs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return iofs.ModeSocket
	case syscall.S_IFCHR:
		return iofs.ModeDevice | iofs.ModeCharDevice
	case syscall.S_IFBLK:
		return iofs.ModeDevice
	}
	return iofs.ModeIrregular
}

// modTime is the modification time of name in the directory, not
// following a symlink. fstatat resolves one name, where lstat on the full
// path walks it from the root again.
func (d openDir) modTime(name string) (time.Time, bool) {
	var st unix.Stat_t
	if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return time.Time{}, false
	}
	return time.Unix(st.Mtim.Unix()), true
}
