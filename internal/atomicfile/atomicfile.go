// Package atomicfile replaces files so that a concurrent reader sees the old
// content or the new, never a mix, and a process killed mid-write leaves no
// half-written file. It is a leaf shared by the file tools (which import
// only registry and leaves) and the agent's editor-backed file access, so
// the one routine serves both.
//
// On Linux a replacement is written into an unnamed file in the target's
// directory (O_TMPFILE), synced, then linked under a temporary name and
// renamed over the target (tmpfile_linux.go): until it is complete it has no
// name, so a kill in the middle of writing leaves nothing anyone can see.
// Elsewhere, and where the file system refuses unnamed files, it is written
// to a named temporary file beside the target and renamed over it. Either
// way a name exists for a moment (the whole write on the fallback, between
// link and rename on Linux), so the name is recorded in a journal (see
// Journal) before it exists; the next process to start (see Sweep), and for
// the named files of the fallback the watchdog that outlives a killed
// bridge (cmd/acp-bridge/reaper.go), remove what a dead one left: only
// files it recorded, so nothing the bridge did not make is ever removed.
package atomicfile

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Write replaces path with data: written beside the target, synced, given
// the old file's mode, renamed over the target. A symlink is written
// through (its target is replaced), not replaced by a file. Missing parent
// directories are created.
func Write(path string, data []byte) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	mode := iofs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	} else if !errors.Is(err, iofs.ErrNotExist) {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs // the journal names files absolutely
	}
	if done, err := writeUnnamed(dir, path, data, mode); done || err != nil {
		return err
	}
	announce() // the watchdog knows the journal before a named file exists
	return writeNamed(dir, path, data, mode)
}

// writeNamed is the replacement through a named temporary file, where
// unnamed files are not to be had.
func writeNamed(dir, path string, data []byte, mode iofs.FileMode) error {
	tmp, err := createTemp(dir, filepath.Base(path))
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := fill(tmp, path, data, mode); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	ok = true
	return nil
}

// fill writes data into f, gives it mode and syncs it.
func fill(f *os.File, path string, data []byte, mode iofs.FileMode) error {
	if midWrite != nil {
		// A test build pauses here with half of data written (faults.go).
		half := len(data) / 2
		if _, err := f.Write(data[:half]); err != nil {
			return err
		}
		midWrite(path)
		data = data[half:]
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	return f.Sync()
}

// midWrite, when set (only by the fault-injection build, faults.go), is
// called with half of a replacement written.
var midWrite func(path string)

// tempName is the temporary file for base: hidden, named after the target
// and this process, so a person who finds one knows what it is.
func tempName(base string) string {
	return "." + base + ".acp-bridge-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(uint64(rand.Uint32()), 10)
}

// reserve names a new temporary file in dir for base and creates it with
// create (which reports iofs.ErrExist for a name in use), its path in the
// journal before it exists.
func reserve(dir, base string, create func(p string) error) (string, error) {
	for range 100 {
		p := filepath.Join(dir, tempName(base))
		if err := record(p); err != nil {
			return "", fmt.Errorf("record temporary file: %w", err)
		}
		err := create(p)
		if errors.Is(err, iofs.ErrExist) {
			continue
		}
		return p, err
	}
	return "", errors.New("no unused temporary file name in " + dir)
}

// createTemp makes a new named temporary file in dir.
func createTemp(dir, base string) (*os.File, error) {
	var f *os.File
	_, err := reserve(dir, base, func(p string) (err error) {
		f, err = os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	return f, err
}
