// Package fs holds the reference file tools (read, and later write, edit,
// glob, grep), one tool per file. Paths are resolved against the session
// cwd; every path a card carries is absolute.
package fs

import (
	"path/filepath"
	"strings"

	"github.com/acp-bridge/acp-bridge/registry"
)

// Register adds the file tools to r.
func Register(r *registry.Registry) {
	registry.MustAdd(r, readTool())
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
