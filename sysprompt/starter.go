package sysprompt

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Starter writes a first AGENTS.md for the workspace at root from what its
// files say: the build systems it uses and their commands, the top-level
// layout and the README's title. It only reads; the caller decides whether
// to write it (and asks the user first).
func Starter(root string) string {
	var (
		project = filepath.Base(root)
		about   string
		cmds    []string // "- Build: `…`" lines
		langs   []string
	)
	if t, p := readmeTitle(root); t != "" {
		project, about = t, p
	}
	add := func(label, cmd string) {
		line := fmt.Sprintf("- %s: `%s`", label, cmd)
		if !slices.Contains(cmds, line) {
			cmds = append(cmds, line)
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err == nil {
		langs = append(langs, "Go")
		if m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(b); m != nil {
			langs[len(langs)-1] = "Go (module `" + string(m[1]) + "`)"
		}
		add("Build", "go build ./...")
		add("Test", "go test ./...")
		add("Vet", "go vet ./...")
		add("Format", "gofmt -l .")
	}
	if b, err := os.ReadFile(filepath.Join(root, "package.json")); err == nil {
		langs = append(langs, "JavaScript/TypeScript (package.json)")
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
		}
		_ = json.Unmarshal(b, &pkg)
		pm := "npm"
		switch {
		case exists(root, "pnpm-lock.yaml"):
			pm = "pnpm"
		case exists(root, "yarn.lock"):
			pm = "yarn"
		case exists(root, "bun.lockb"), exists(root, "bun.lock"):
			pm = "bun"
		}
		for _, s := range []string{"build", "test", "lint", "typecheck", "format"} {
			if _, ok := pkg.Scripts[s]; ok {
				add(strings.ToUpper(s[:1])+s[1:], pm+" run "+s)
			}
		}
	}
	if exists(root, "Cargo.toml") {
		langs = append(langs, "Rust (Cargo)")
		add("Build", "cargo build")
		add("Test", "cargo test")
		add("Lint", "cargo clippy")
		add("Format", "cargo fmt --check")
	}
	if exists(root, "pyproject.toml") || exists(root, "setup.py") {
		langs = append(langs, "Python")
		add("Test", "pytest")
	}
	for _, t := range makeTargets(root) {
		if slices.Contains([]string{"build", "test", "check", "lint", "fmt"}, t) {
			add("Make "+t, "make "+t)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", project)
	b.WriteString("Instructions for coding agents working in this repository (the AGENTS.md convention).\n")
	b.WriteString("Keep it short and true: agents read all of it on every request.\n")
	if about != "" {
		fmt.Fprintf(&b, "\n%s\n", about)
	}
	if len(langs) > 0 {
		fmt.Fprintf(&b, "\n## Stack\n\n- %s\n", strings.Join(langs, "\n- "))
	}
	if dirs := topDirs(root); len(dirs) > 0 {
		b.WriteString("\n## Layout\n\n")
		for _, d := range dirs {
			fmt.Fprintf(&b, "- `%s/`\n", d)
		}
	}
	b.WriteString("\n## Build and test\n\n")
	if len(cmds) == 0 {
		b.WriteString("- (How to build and test this project: the commands an agent should run after a change.)\n")
	} else {
		b.WriteString(strings.Join(cmds, "\n") + "\n\nRun the tests after every change and fix what fails before finishing.\n")
	}
	b.WriteString("\n## Conventions\n\n- (Code style, naming, error handling, commit messages: what a reviewer would ask for.)\n- (Files or directories agents must not change.)\n")
	return b.String()
}

func exists(root, name string) bool {
	_, err := os.Stat(filepath.Join(root, name))
	return err == nil
}

// readmeTitle returns the README's first heading and first paragraph line.
func readmeTitle(root string) (title, para string) {
	for _, n := range []string{"README.md", "README", "readme.md", "README.rst"} {
		f, err := os.Open(filepath.Join(root, n))
		if err != nil {
			continue
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for i := 0; sc.Scan() && i < 60; i++ {
			l := strings.TrimSpace(sc.Text())
			switch {
			case title == "" && strings.HasPrefix(l, "# "):
				title = strings.TrimSpace(l[2:])
			case title != "" && l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "[!") && !strings.HasPrefix(l, "!["):
				return title, l
			case title != "" && strings.HasPrefix(l, "#"):
				return title, ""
			}
		}
		return title, ""
	}
	return "", ""
}

// makeTarget is compiled at first use, off the start-up path.
var makeTarget = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_-]*):`) })

func makeTargets(root string) []string {
	f, err := os.Open(filepath.Join(root, "Makefile"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := makeTarget().FindStringSubmatch(sc.Text()); m != nil && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// topDirs lists the visible top-level directories, sorted, at most 20.
func topDirs(root string) []string {
	es, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range es {
		n := e.Name()
		if !e.IsDir() || strings.HasPrefix(n, ".") || slices.Contains([]string{"node_modules", "vendor", "target", "dist", "build", "__pycache__"}, n) {
			continue
		}
		out = append(out, n)
		if len(out) == 20 {
			break
		}
	}
	return out
}
