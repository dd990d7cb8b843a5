// Package fs holds the reference file tools (read, write, edit, glob, grep),
// one tool per file. Paths are resolved against the session cwd; every path
// a card carries is absolute.
package fs

import (
	"context"
	"github.com/acp-bridge/acp-bridge/internal/atomicfile"
	"os"
	"path/filepath"
	"strings"

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
// version of a file is its content: what the session last saw (read) or
// last put there (write, edit).
type Tracker interface {
	// MarkRead records content as the version of path the session has seen.
	MarkRead(path, content string)
	// ReadState reports whether the session has seen path, and whether
	// content is still the version it saw.
	ReadState(path, content string) (seen, current bool)
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
