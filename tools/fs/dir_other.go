//go:build !linux

package fs

import (
	"errors"
	"os"
	"time"
)

// openDir is a directory open for listing (see dir_linux.go for why Linux
// reads it with raw system calls).
type openDir struct{ f *os.File }

func openDirectory(abs string) (openDir, error) {
	f, err := os.Open(abs)
	return openDir{f}, err
}

func (d openDir) close() { d.f.Close() }

// holdDirs: elsewhere files are opened by their whole path, so the walk
// keeps no directory open for them.
const holdDirs = false

// open is not offered where holdDirs is false: the walk holds no
// directory, so no file comes with one to open it in.
func (d openDir) open(string, *[]byte) (fileHandle, error) {
	var none fileHandle
	return none, errors.ErrUnsupported
}

func (d openDir) entries([]byte) ([]dirEntry, error) {
	des, err := d.f.ReadDir(-1)
	out := make([]dirEntry, 0, len(des))
	for _, e := range des {
		out = append(out, dirEntry{name: e.Name(), typ: e.Type()})
	}
	return out, err
}

// modTime is the modification time of name in the directory, not
// following a symlink.
func (d openDir) modTime(name string) (time.Time, bool) { return modTimeAt(d.f, name) }
