//go:build !unix

package fs

import (
	"os"
	"path/filepath"
	"time"
)

// modTimeAt is the modification time of name in the open directory dir,
// not following a symlink.
func modTimeAt(dir *os.File, name string) (time.Time, bool) {
	info, err := os.Lstat(filepath.Join(dir.Name(), name))
	if err != nil {
		return time.Time{}, false
	}
	return info.ModTime(), true
}
