// Package atomicfile replaces files so that a concurrent reader sees the old
// content or the new, never a mix. It is a leaf shared by the file tools
// (which import only registry and leaves) and the agent's editor-backed
// file access, so the one routine serves both.
package atomicfile

import (
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
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
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".acp-bridge-*")
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
