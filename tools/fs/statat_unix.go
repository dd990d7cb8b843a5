//go:build unix && !linux

package fs

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// modTimeAt is the modification time of name in the open directory dir,
// not following a symlink. fstatat resolves one name, where lstat on the
// full path walks it from the root again.
func modTimeAt(dir *os.File, name string) (time.Time, bool) {
	var st unix.Stat_t
	if unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return time.Time{}, false
	}
	return time.Unix(st.Mtim.Unix()), true
}
