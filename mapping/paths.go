package mapping

import (
	"path/filepath"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/registry"
)

// titleAndLocations resolves locations to absolute paths and shows the
// title's path relative to the cwd when it lies inside it. A diff card
// without locations points at the files it changes, so the editor can open
// them and follow the agent.
func (t *Translator) titleAndLocations(title string, locs []registry.Location, diffs []registry.FileDiff) (string, []acp.ToolCallLocation) {
	var out []acp.ToolCallLocation
	for _, l := range locs {
		loc := acp.ToolCallLocation{Path: t.abs(l.Path)}
		if l.Line > 0 {
			line := l.Line
			loc.Line = &line
		}
		out = append(out, loc)
	}
	if len(locs) == 0 {
		seen := map[string]bool{}
		for _, d := range diffs {
			if p := t.abs(d.Path); !seen[p] {
				seen[p] = true
				out = append(out, acp.ToolCallLocation{Path: p})
			}
		}
	}
	raw := ""
	switch {
	case len(locs) > 0:
		raw = locs[0].Path
	case len(diffs) > 0:
		raw = diffs[0].Path
	}
	return t.relTitle(title, raw), out
}

// abs resolves p against the session cwd: every path on the wire is absolute.
func (t *Translator) abs(p string) string {
	if p == "" {
		return t.o.Cwd
	}
	if filepath.IsAbs(p) || t.o.Cwd == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(t.o.Cwd, p)
}

// relTitle replaces the path as the tool wrote it (raw) in title by its
// form relative to the cwd, when the path is inside the cwd. Escaping is
// judged on the ".." segment, so a file named "..cache" is still inside.
func (t *Translator) relTitle(title, raw string) string {
	if raw == "" || t.o.Cwd == "" || !strings.Contains(title, raw) {
		return title
	}
	rel, err := filepath.Rel(t.o.Cwd, t.abs(raw))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return title
	}
	return strings.ReplaceAll(title, raw, rel)
}
