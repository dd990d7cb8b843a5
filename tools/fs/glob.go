package fs

import (
	"context"
	"fmt"
	"github.com/google/jsonschema-go/jsonschema"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
)

// globLimit caps the paths one glob returns.
const globLimit = 100

type globArgs struct {
	Pattern string `json:"pattern" jsonschema:"The glob pattern, e.g. \"**/*.go\" or \"src/*.{ts,tsx}\""`
	Path    string `json:"path,omitempty" jsonschema:"The directory to search, absolute or relative to the workspace root (default: the workspace root)"`
}

type globOut struct {
	Root  string   `json:"root"`
	Files []string `json:"files"` // newest first, at most globLimit
	Total int      `json:"total"` // every match
}

func globTool() registry.Tool[globArgs, globOut] {
	return registry.Tool[globArgs, globOut]{
		Name:  "glob",
		Facts: registry.Facts{ReadOnly: true, Kind: "search"},
		Description: "Find files by name pattern, newest first (at most 100). A pattern without \"/\" matches file names " +
			"at any depth (\"*.go\"); with \"/\" it matches paths relative to path (\"src/**/*.ts\"); \"**\" spans directories " +
			"and {a,b} gives alternatives. Files ignored by .gitignore and VCS directories are skipped.",
		Schema: func(s *jsonschema.Schema) { s.Properties["pattern"].MinLength = jsonschema.Ptr(1) },
		Run:    runGlob,
		Render: func(_ globArgs, out globOut) []registry.Content {
			return []registry.Content{registry.Text(renderGlob(out))}
		},
		ConcurrencySafe: func(globArgs) bool { return true },
		PresentCall: func(in globArgs) registry.View {
			return registry.GenericCard{Title: searchTitle("Glob", in.Pattern, in.Path, ""), Kind: "search"}
		},
		Permission: func(c *registry.Call, in globArgs) *registry.Permission {
			root, _ := splitAbsPattern(resolve(c.Cwd, in.Path), in.Pattern)
			return outsidePermission(c, root, "search")
		},
	}
}

// searchTitle names a search with its pattern as inline code, so Markdown
// in a pattern ("**/*.go", "a_b_c") shows as typed.
func searchTitle(verb, pattern, path, include string) string {
	t := verb + " " + inlineCode(pattern)
	if path != "" {
		t += " in " + path
	}
	if include != "" {
		t += " (" + inlineCode(include) + ")"
	}
	return t
}

// inlineCode is s as a Markdown code span: delimited by a backtick run
// longer than any inside it, padded with a space when s starts or ends
// with a backtick.
func inlineCode(s string) string {
	ticks := "`"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// splitAbsPattern moves the literal directories at the front of an absolute
// pattern ("/repo/src/**/*.go") into the search root.
func splitAbsPattern(root, pattern string) (string, string) {
	if !filepath.IsAbs(pattern) {
		return root, pattern
	}
	segs := strings.Split(filepath.ToSlash(pattern), "/")
	i := 1
	for i < len(segs)-1 && !strings.ContainsAny(segs[i], "*?[{") {
		i++
	}
	return filepath.FromSlash("/" + strings.Join(segs[1:i], "/")), strings.Join(segs[i:], "/")
}

func runGlob(ctx context.Context, c *registry.Call, in globArgs) (globOut, error) {
	root, pattern := splitAbsPattern(resolve(c.Cwd, in.Path), in.Pattern)
	out := globOut{Root: root}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return out, registry.Errorf("FS_NOT_FOUND", fmt.Sprintf("directory not found: %s", root))
	}
	m, err := newGlobMatcher(pattern)
	if err != nil {
		return out, registry.Errorf("INVALID_ARGS", fmt.Sprintf("invalid glob pattern %q: %v", in.Pattern, err))
	}
	type hit struct {
		path string
		mod  time.Time
	}
	var hits []hit
	err = walkFiles(ctx, root, func(abs string, d iofs.DirEntry) error {
		rel, _ := filepath.Rel(root, abs)
		if !m.match(rel) {
			return nil
		}
		h := hit{path: abs}
		if info, err := d.Info(); err == nil {
			h.mod = info.ModTime()
		}
		hits = append(hits, h)
		return nil
	})
	if err != nil {
		return out, err
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	out.Total = len(hits)
	for _, h := range hits[:min(len(hits), globLimit)] {
		out.Files = append(out.Files, h.path)
	}
	return out, nil
}

func renderGlob(out globOut) string {
	if out.Total == 0 {
		return "No files found"
	}
	s := strings.Join(out.Files, "\n")
	if out.Total > len(out.Files) {
		s += fmt.Sprintf("\n\n(Showing the %d most recently modified of %d matching files. Use a more specific pattern or path to see the rest.)", len(out.Files), out.Total)
	}
	return s
}
