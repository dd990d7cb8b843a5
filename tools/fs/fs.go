// Package fs holds the reference file tools (read, write, edit, glob, grep),
// one tool per file. Paths are resolved against the session cwd; every path
// a card carries is absolute.
package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/internal/atomicfile"
	"github.com/acp-bridge/acp-bridge/registry"
)

// Register adds the file tools to r.
func Register(r *registry.Registry) {
	registry.MustAdd(r, readTool())
	registry.MustAdd(r, writeTool())
	registry.MustAdd(r, editTool())
	registry.MustAdd(r, globTool())
	registry.MustAdd(r, grepTool())
}

// Tracker is the read-tracking a Call.Files may offer (the agent's does,
// per session). With it, edit refuses a file the session has not read, or
// that changed since it was read, and write refuses to overwrite one. The
// version of a file is its content, known by its diffs.Hash (taken once,
// diffs.Version, for the tracking and the change's Undo): what the session
// last saw (read) or last put there (write, edit).
type Tracker interface {
	// MarkRead records the content of hash as the version of path the
	// session has seen.
	MarkRead(path, hash string)
	// ReadState reports whether the session has seen path, and whether
	// the content of hash is still the version it saw.
	ReadState(path, hash string) (seen, current bool)
}

// files returns the call's file access: the agent's (editor or disk), or
// the disk when the call has none.
func files(c *registry.Call) registry.Files {
	if c.Files != nil {
		return c.Files
	}
	return disk{}
}

func tracker(c *registry.Call) Tracker {
	t, _ := c.Files.(Tracker)
	return t
}

// disk is file access straight to the disk, for calls without an agent
// (tests, embedders). The agent's own implementation lives in package agent,
// which tools do not import; the atomic write is repeated there.
type disk struct{}

func (disk) ReadText(_ context.Context, path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func (disk) WriteText(_ context.Context, path, content string) error {
	return atomicfile.Write(path, []byte(content))
}

// readText reads path through the call's file access. onDisk says whether
// the file exists on disk. An editor may answer a file it does not have
// with an empty text instead of an error (Zed opens an empty new buffer for
// a path inside the project), so an empty answer for a file that is not on
// disk means the file does not exist; a non-empty one is an unsaved buffer.
func readText(ctx context.Context, c *registry.Call, path string, onDisk bool) (string, error) {
	s, err := files(c).ReadText(ctx, path)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return "", notFound(path)
	case err != nil:
		return "", registry.Errorf("FS_ERROR", fmt.Sprintf("could not read %s: %v", path, err))
	case s == "" && !onDisk:
		return "", notFound(path)
	}
	return s, nil
}

func notFound(path string) error {
	return registry.Errorf("FS_NOT_FOUND", fmt.Sprintf("file not found: %s", path))
}

// writeText writes content to path through the call's file access and
// returns the text the file holds afterwards. An editor may change the text
// as it saves it (Zed formats on save by default), so a write through the
// agent's file access is read back: what it returns is what the session has
// seen, what the diff card shows and what the next edit is checked against.
// When the read-back fails, or answers nothing for a file still not on
// disk, the text sent stands.
func writeText(ctx context.Context, c *registry.Call, path, content string) (diffs.Version, error) {
	f := files(c)
	if err := f.WriteText(ctx, path, content); err != nil {
		return diffs.Version{}, registry.Errorf("FS_ERROR", fmt.Sprintf("could not write %s: %v", path, err))
	}
	saved := content
	if c.Files != nil { // disk{} wrote exactly content
		_, statErr := os.Stat(path)
		if s, err := readText(ctx, c, path, statErr == nil); err == nil {
			saved = s
		}
	}
	v := diffs.VersionOf(saved)
	if t := tracker(c); t != nil {
		t.MarkRead(path, v.Hash)
	}
	return v, nil
}

// resolve makes p absolute against cwd.
func resolve(cwd, p string) string {
	if p == "" {
		return cwd
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// fence wraps text in a Markdown code fence longer than any backtick run inside it.
func fence(text, lang string) string {
	ticks := "```"
	for strings.Contains(text, ticks) {
		ticks += "`"
	}
	return ticks + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + ticks
}
