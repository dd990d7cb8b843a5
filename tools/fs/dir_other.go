//go:build !linux

package fs

import (
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

// open is never called where holdDirs is false.
func (d openDir) open(string, *[]byte) (fileHandle, error) {
	panic("fs: openDir.open without holdDirs")
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
