// Package atomicfile replaces files so that a concurrent reader sees the old
// content or the new, never a mix. It is a leaf shared by the file tools
// (which import only registry and leaves) and the agent's editor-backed
// file access, so the one routine serves both.
//
// A replacement is written to a temporary file beside the target and renamed
// over it. A process killed in between leaves the temporary file in the
// user's project; so the name of every temporary file is recorded in a
// journal (see Journal) before the file is created, and the next process
// removes what a dead one left (see Sweep): only files it recorded, so
// nothing the bridge did not make is ever removed.
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

// Write replaces path with data: a temp file in the same directory, synced,
// given the old file's mode, renamed over the target. A symlink is written
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
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
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

// tempName is the temporary file for base: hidden, named after the target
// and this process, so a person who finds one knows what it is.
func tempName(base string) string {
	return "." + base + ".acp-bridge-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(uint64(rand.Uint32()), 10)
}

// createTemp makes a new temporary file in dir, its path in the journal
// before it exists.
func createTemp(dir, base string) (*os.File, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs // the journal names files absolutely
	}
	for range 100 {
		p := filepath.Join(dir, tempName(base))
		if err := record(p); err != nil {
			return nil, fmt.Errorf("record temporary file: %w", err)
		}
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, iofs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, errors.New("no unused temporary file name in " + dir)
}
