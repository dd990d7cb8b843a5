package main

import (
	"bufio"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPackageListsAreWhole keeps the two package tables true: every Go
// package of the module is named in README.md's "Packages" table and in
// docs/DESIGN.md's, and neither names a package that is gone. A package
// added without a line in both fails here, which is how the tables drifted
// before (sysprompt, compact, internal/jobs and others were missing).
func TestPackageListsAreWhole(t *testing.T) {
	root := filepath.Join("..", "..")
	pkgs := modulePackages(t, root)
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages under %s: %v", len(pkgs), root, pkgs)
	}
	for _, doc := range []string{"README.md", filepath.Join("docs", "DESIGN.md")} {
		named := packageTable(t, filepath.Join(root, doc))
		for _, p := range pkgs {
			if !named[p] {
				t.Errorf("%s: the Packages table does not name `%s`", doc, p)
			}
		}
		for p := range named {
			if !slices.Contains(pkgs, p) {
				t.Errorf("%s: the Packages table names `%s`, which is not a package of the module", doc, p)
			}
		}
	}
}

// modulePackages lists the directories under root that hold a non-test Go
// file, as paths relative to root with forward slashes; testdata and hidden
// directories are not packages.
func modulePackages(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") && !ignored(t, path) {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			seen[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// ignored reports whether a Go file is left out of every build
// (`//go:build ignore`, as a program run with `go run FILE` is): it makes no
// package of the module.
func ignored(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "//go:build ignore":
			return true
		case line == "" || strings.HasPrefix(line, "//"):
			continue
		}
		return false // the build constraints come before the package clause
	}
	return false
}

var backticked = regexp.MustCompile("`([^`]+)`")

// packageTable reads the table under the doc's "## Packages" heading and
// returns every package its first column names (a cell may name several,
// each in backticks).
func packageTable(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	named := map[string]bool{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.TrimSpace(strings.TrimLeft(line, "#")) == "Packages"
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			named[m[1]] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(named) == 0 {
		t.Fatalf("%s has no Packages table", path)
	}
	return named
}

// TestReadmeNamesEveryTool keeps the README's tool list whole: every tool
// the binary registers is described there as a "- `name {args}`" entry (or
// named in the entry of a tool it belongs with, as job_output is in
// bash's), so a user meets no tool the README does not explain. The
// question tool was missing before this test.
func TestReadmeNamesEveryTool(t *testing.T) {
	opts, err := agentOptions(&config{permissionMode: "ask", toolsMode: "native"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	tools := docPart(t, "README.md", "\n## Tools\n", "\n## ")
	entry := regexp.MustCompile("(?m)^- `([a-z_]+) \\{")
	described := map[string]bool{}
	for _, m := range entry.FindAllStringSubmatch(tools, -1) {
		described[m[1]] = true
	}
	defs := opts.Registry.Visible(nil)
	if len(defs) < 5 {
		t.Fatalf("the registry has only %d tools", len(defs))
	}
	for _, d := range defs {
		if !described[d.Name] && !strings.Contains(tools, "`"+d.Name+" {") {
			t.Errorf("README.md's Tools section does not describe %s", d.Name)
		}
	}
}

// TestDesignImportGraph keeps docs/DESIGN.md's "Imports point one way"
// paragraph true: each `pkg → {a, b}` it states is what pkg imports of the
// module (tests aside), every package that imports some of the module is
// stated, and the ones it says import nothing of the bridge import nothing.
func TestDesignImportGraph(t *testing.T) {
	root := filepath.Join("..", "..")
	list := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Skipf("go list: %v", err) // the go command is what every other test here builds with
	}
	const mod = "github.com/acp-bridge/acp-bridge"
	actual := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		p := strings.TrimPrefix(strings.TrimPrefix(f[0], mod), "/")
		actual[p] = []string{}
		for _, imp := range f[1:] {
			if rest, ok := strings.CutPrefix(imp, mod+"/"); ok {
				actual[p] = append(actual[p], rest)
			}
		}
		slices.Sort(actual[p])
	}
	para := strings.Join(strings.Fields(docPart(t, "docs/DESIGN.md", "Imports point one way", "No cycles.")), " ")
	stated := map[string][]string{}
	edge := regexp.MustCompile("`([a-z0-9/-]+) → (?:\\{([^}]*)\\}|([a-z0-9/-]+))`")
	for _, m := range edge.FindAllStringSubmatch(para, -1) {
		var to []string
		for _, s := range strings.Split(m[2]+m[3], ",") {
			if s = strings.TrimSpace(s); s != "" {
				to = append(to, s)
			}
		}
		slices.Sort(to)
		stated[m[1]] = to
	}
	_, nothing, ok := strings.Cut(para, "; `acp`")
	nothing, _, ok2 := strings.Cut(nothing, "import nothing of the bridge")
	if !ok || !ok2 {
		t.Fatal("docs/DESIGN.md does not say which packages import nothing of the bridge")
	}
	none := map[string]bool{"acp": true}
	for _, m := range backticked.FindAllStringSubmatch(nothing, -1) {
		none[m[1]] = true
	}
	for p, imps := range actual {
		if p == "conformance" {
			continue // "imports nothing of the bridge outside its tests": checked by go list below
		}
		want, ok := stated[p]
		switch {
		case ok && !slices.Equal(want, imps):
			t.Errorf("DESIGN.md says %s → %v; it imports %v", p, want, imps)
		case !ok && len(imps) > 0:
			t.Errorf("DESIGN.md does not state what %s imports: %v", p, imps)
		case !ok && !none[p] && !(strings.HasPrefix(p, "internal/") && none["internal/*"]):
			t.Errorf("DESIGN.md does not say that %s imports nothing of the bridge", p)
		}
	}
	if imps := actual["conformance"]; len(imps) > 0 {
		t.Errorf("conformance imports %v outside its tests; DESIGN.md says nothing", imps)
	}
	for p := range stated {
		if _, ok := actual[p]; !ok {
			t.Errorf("DESIGN.md states the imports of %s, which is not a package", p)
		}
	}
	for p := range none {
		if _, ok := actual[p]; !ok && p != "internal/*" {
			t.Errorf("DESIGN.md says %s imports nothing, but it is not a package", p)
		}
		if imps := actual[p]; len(imps) > 0 {
			t.Errorf("DESIGN.md says %s imports nothing of the bridge; it imports %v", p, imps)
		}
	}
}

// docPart is the text of the repository's doc (a slash path from the
// module root) after the first from, up to the next to (or its end); a doc
// without from fails the test.
func docPart(t *testing.T, doc, from, to string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(doc)))
	if err != nil {
		t.Fatal(err)
	}
	_, part, ok := strings.Cut(string(b), from)
	if !ok {
		t.Fatalf("%s has no %q", doc, strings.TrimSpace(from))
	}
	part, _, _ = strings.Cut(part, to)
	return part
}
