package fs_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
)

// searchTree is a workspace with a .gitignore (root and nested), VCS
// metadata and a binary file.
func searchTree(t *testing.T) *env {
	e := newEnv(t, nil)
	files := map[string]string{
		".gitignore":           "build/\n*.log\n/only-root.txt\n!keep.log\n",
		"main.go":              "package main\n\nfunc main() { Hello() }\n",
		"pkg/hello.go":         "package pkg\n\nfunc Hello() {}\n",
		"pkg/hello_test.go":    "package pkg\n// Hello is tested\n",
		"pkg/.gitignore":       "gen_*.go\n",
		"pkg/gen_x.go":         "package pkg // Hello generated\n",
		"pkg/deep/a/b/c.go":    "package b // Hello deep\n",
		"build/out.go":         "package build // Hello built\n",
		"app.log":              "Hello log\n",
		"keep.log":             "Hello kept\n",
		"only-root.txt":        "Hello root-only\n",
		"sub/only-root.txt":    "Hello sub\n",
		".git/config":          "Hello git\n",
		"web/x.ts":             "Hello ts\n",
		"web/y.tsx":            "Hello tsx\n",
		"crlf.txt":             "first\r\nHello crlf\r\n",
		".hidden/h.go":         "package h // Hello hidden\n",
		"src/build/inside.txt": "Hello nested build dir\n",
	}
	for p, c := range files {
		e.write(p, c)
	}
	if err := os.WriteFile(e.path("bin.dat"), []byte("Hello\x00binary"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestGlob(t *testing.T) {
	e := searchTree(t)
	tests := []struct {
		pattern, path string
		want          []string // relative, sorted by name for comparison
	}{
		{"*.go", "", []string{".hidden/h.go", "main.go", "pkg/deep/a/b/c.go", "pkg/hello.go", "pkg/hello_test.go"}},
		{"**/*.go", "", []string{".hidden/h.go", "main.go", "pkg/deep/a/b/c.go", "pkg/hello.go", "pkg/hello_test.go"}},
		{"pkg/*.go", "", []string{"pkg/hello.go", "pkg/hello_test.go"}},
		{"pkg/**/c.go", "", []string{"pkg/deep/a/b/c.go"}},
		{"*.{ts,tsx}", "", []string{"web/x.ts", "web/y.tsx"}},
		{"*.log", "", []string{"keep.log"}},
		{"only-root.txt", "", []string{"sub/only-root.txt"}},
		{"*.go", "pkg", []string{"pkg/deep/a/b/c.go", "pkg/hello.go", "pkg/hello_test.go"}},
		{"config", "", nil},
		{"*.txt", "src", nil}, // src/build is ignored by the root's build/
	}
	for _, tt := range tests {
		a := args{"pattern": tt.pattern}
		if tt.path != "" {
			a["path"] = tt.path
		}
		r := e.mustRun("glob", a)
		var got []string
		if r.Text() != "No files found" {
			for _, l := range strings.Split(r.Text(), "\n") {
				got = append(got, strings.TrimPrefix(l, e.dir+"/"))
			}
		}
		if fmt.Sprint(sorted(got)) != fmt.Sprint(tt.want) {
			t.Errorf("glob %q in %q: got %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestGlobNewestFirstAndCap(t *testing.T) {
	e := newEnv(t, nil)
	base := time.Now().Add(-time.Hour)
	for i := range 130 {
		p := e.write(fmt.Sprintf("f%03d.txt", i), "x")
		mt := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	r := e.mustRun("glob", args{"pattern": "*.txt"})
	lines := strings.Split(r.Text(), "\n")
	if lines[0] != e.path("f129.txt") || lines[99] != e.path("f030.txt") {
		t.Errorf("not newest first: %s … %s", lines[0], lines[99])
	}
	if want := "(Showing the 100 most recently modified of 130 matching files. Use a more specific pattern or path to see the rest.)"; lines[len(lines)-1] != want || len(lines) != 102 {
		t.Errorf("cap note: %d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

func TestGrep(t *testing.T) {
	e := searchTree(t)
	tests := []struct {
		pattern, path, include string
		want                   []string // "rel:line"
	}{
		{"Hello", "", "", []string{".hidden/h.go:1", "crlf.txt:2", "keep.log:1", "main.go:3", "pkg/deep/a/b/c.go:1", "pkg/hello.go:3", "pkg/hello_test.go:2", "sub/only-root.txt:1", "web/x.ts:1", "web/y.tsx:1"}},
		{"^func", "", "*.go", []string{"main.go:3", "pkg/hello.go:3"}},
		{"crlf$", "", "", []string{"crlf.txt:2"}},
		{"Hello", "pkg", "", []string{"pkg/deep/a/b/c.go:1", "pkg/hello.go:3", "pkg/hello_test.go:2"}},
		{"Hello", "", "*.{ts,tsx}", []string{"web/x.ts:1", "web/y.tsx:1"}},
		{`H\w+o`, "main.go", "", []string{"main.go:3"}},
		{"nothing-matches-this", "", "", nil},
	}
	for _, tt := range tests {
		a := args{"pattern": tt.pattern}
		if tt.path != "" {
			a["path"] = tt.path
		}
		if tt.include != "" {
			a["include"] = tt.include
		}
		r := e.mustRun("grep", a)
		var m struct{ Locations []registry.Location }
		if err := json.Unmarshal(r.Meta, &m); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range m.Locations {
			got = append(got, fmt.Sprintf("%s:%d", strings.TrimPrefix(l.Path, e.dir+"/"), l.Line))
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("grep %q path %q include %q:\ngot  %v\nwant %v\n%s", tt.pattern, tt.path, tt.include, got, tt.want, r.Text())
		}
		// The card carries the same locations.
		card := e.scope.Get("grep").PresentResult(e.call("grep", a).Args, r).(registry.GenericCard)
		if len(card.Locations) != len(tt.want) || card.Kind != "search" {
			t.Errorf("card %+v", card)
		}
	}
	r := e.mustRun("grep", args{"pattern": "^func", "include": "*.go"})
	want := "Found 2 matches in 2 files\n" + e.path("main.go") + ":\n  3: func main() { Hello() }\n\n" + e.path("pkg/hello.go") + ":\n  3: func Hello() {}"
	if r.Text() != want {
		t.Errorf("text:\n%s\nwant:\n%s", r.Text(), want)
	}
	if r := e.run("grep", args{"pattern": "("}); r.Code != "INVALID_ARGS" {
		t.Errorf("bad regexp: %s %s", r.Code, r.Text())
	}
}

func TestGrepCap(t *testing.T) {
	e := newEnv(t, nil)
	// 40 files of 10 matches each, so the cap falls in file 25.
	for i := range 40 {
		e.write(fmt.Sprintf("d/f%02d.txt", i), strings.Repeat("match\n", 10))
	}
	r := e.mustRun("grep", args{"pattern": "match"})
	lines := strings.Split(r.Text(), "\n")
	if lines[0] != "Found more than 250 matches; showing the first 250. Narrow the pattern, path or include to see the rest." {
		t.Errorf("header %q", lines[0])
	}
	var m struct{ Locations []registry.Location }
	_ = json.Unmarshal(r.Meta, &m)
	if len(m.Locations) != 250 || m.Locations[249].Path != e.path("d/f24.txt") || m.Locations[249].Line != 10 {
		t.Errorf("%d locations, last %+v", len(m.Locations), m.Locations[len(m.Locations)-1])
	}
	if strings.Contains(r.Text(), "f25.txt") {
		t.Errorf("results past the cap")
	}
}
