package mapping

import (
	"path/filepath"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/registry"
)

// ZeroBasedLines reports whether the client identified by info reads
// ToolCallLocation.line as a 0-based row. The schema says the line is
// 1-based, and tools give 1-based lines (registry.Location); Zed uses the
// value as a 0-based row (its follow-along opens Point::new(line, 0)), so a
// 1-based line lands one row low there. Nothing in Zed's capabilities tells
// this apart, but it names itself in clientInfo ("zed"), so the decision is
// made on that name, here only: the agent passes it on as
// Options.ZeroBasedLines. Every other client gets the schema's 1-based lines.
func ZeroBasedLines(info *acp.Implementation) bool {
	return info != nil && strings.EqualFold(strings.TrimSpace(info.Name), "zed")
}

// wireLine is a tool's 1-based line as this client reads it.
func (t *Translator) wireLine(line int) int {
	if t.o.ZeroBasedLines {
		return line - 1
	}
	return line
}

// MaxSearchLocations caps the locations of a search card. Zed opens (and
// keeps) a buffer for every location of a card, and follows only the last;
// a grep with hundreds of matches would open hundreds of buffers. The
// matches themselves are in the result the model reads.
const MaxSearchLocations = 5

// capLocations keeps the first MaxSearchLocations of a search card.
func capLocations(kind acp.ToolKind, locs []registry.Location) []registry.Location {
	if kind == acp.KindSearch && len(locs) > MaxSearchLocations {
		return locs[:MaxSearchLocations]
	}
	return locs
}

// titleAndLocations resolves locations to absolute paths and shows the
// title's path relative to the cwd when it lies inside it. A diff card
// without locations points at the files it changes, so the editor can open
// them and follow the agent.
func (t *Translator) titleAndLocations(title string, locs []registry.Location, diffs []registry.FileDiff) (string, []acp.ToolCallLocation) {
	var out []acp.ToolCallLocation
	for _, l := range locs {
		loc := acp.ToolCallLocation{Path: t.abs(l.Path)}
		if l.Line > 0 {
			line := t.wireLine(l.Line)
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
