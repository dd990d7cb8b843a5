package fs

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/acp-bridge/acp-bridge/registry"
)

// realPath resolves every symlink of p that exists: the whole path when it
// exists, else its longest existing ancestor with the rest appended, so a
// file about to be created under a symlinked directory is judged by where
// it will really land.
func realPath(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		// A dangling symlink: follow it by hand, since EvalSymlinks fails on it.
		if target, err := os.Readlink(cur); err == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			return realPath(filepath.Join(append([]string{target}, rest...)...))
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// within reports whether p is root or below it (both cleaned, absolute).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// inRoots reports whether p, with symlinks evaluated, lies inside one of
// the session's roots (also evaluated). A call without roots has no
// boundary.
func inRoots(c *registry.Call, p string) bool {
	if len(c.Roots) == 0 {
		return true
	}
	real := realPath(p)
	for _, r := range c.Roots {
		if within(realPath(r), real) {
			return true
		}
	}
	return false
}

// outsidePermission is the approval a call needs to touch a path outside
// the roots; nil when the path is inside. What "always" remembers is that
// one path, never the workspace.
func outsidePermission(c *registry.Call, path, verb string) *registry.Permission {
	if inRoots(c, path) {
		return nil
	}
	real := realPath(path)
	reason := path + " is outside the workspace"
	if real != filepath.Clean(path) {
		reason = path + " leads outside the workspace (to " + real + ")"
	}
	p := &registry.Permission{
		Reason:  verb + " " + path + ": " + reason,
		Key:     verb + ":" + real,
		Subject: verb + " `" + real + "`",
	}
	if !strings.ContainsAny(real, "*?[]()") {
		// The permission rule of that one path: Read covers the searches.
		tool := "Read"
		if verb == "edit" {
			tool = "Edit"
		}
		p.Rule = tool + "(" + filepath.ToSlash(real) + ")"
	}
	return p
}
