package fs

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/google/go-cmp/cmp"
)

// The reference implementations below are the plain way to do what grep
// and glob do: one goroutine, every directory read in turn, every rule
// matched by filepath.Rel, every line of every file run through the
// regexp. The tools, with their prefilters and parallel walk, must give
// exactly the same results.

func refIgnored(rules []ignoreRule, abs string, isDir bool) bool {
	ignored := false
	for _, r := range rules {
		if r.dirOnly && !isDir {
			continue
		}
		rel, err := filepath.Rel(r.dir, abs)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		var ok bool
		if !r.anchored {
			ok, _ = path.Match(r.segs[0], path.Base(rel))
		} else {
			ok = matchSegs(r.segs, strings.Split(rel, "/"))
		}
		if ok {
			ignored = !r.negate
		}
	}
	return ignored
}

// refWalk lists the files under root in walk order: directories' entries
// by name, depth first.
func refWalk(root string) []string {
	var rules []ignoreRule
	var dirs []string
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			break
		}
		if filepath.Dir(d) == d {
			dirs = nil
			break
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		rules = append(rules, parseIgnore(dirs[i])...)
	}
	var out []string
	var walk func(dir string, rules []ignoreRule)
	walk = func(dir string, rules []ignoreRule) {
		rules = append(slices.Clip(rules), parseIgnore(dir)...)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			abs := filepath.Join(dir, e.Name())
			if e.IsDir() {
				if !vcsDir(e.Name()) && !refIgnored(rules, abs, true) {
					walk(abs, rules)
				}
				continue
			}
			if !refIgnored(rules, abs, false) {
				out = append(out, abs)
			}
		}
	}
	walk(root, rules)
	return out
}

func refGrep(c *registry.Call, root, pattern, include string) grepOut {
	re := regexp.MustCompile(pattern)
	var inc *globMatcher
	if include != "" {
		inc, _ = newGlobMatcher(include)
	}
	var files []grepFile
	for _, abs := range refWalk(root) {
		rel, _ := filepath.Rel(root, abs)
		if inc != nil && !inc.match(rel) {
			continue
		}
		st, err := os.Stat(abs)
		if err != nil || !st.Mode().IsRegular() || !inRoots(c, abs) {
			continue
		}
		data, err := os.ReadFile(abs)
		if err != nil || bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
			continue
		}
		var ms []grepMatch
		lines := strings.SplitAfter(string(data), "\n")
		for i, l := range lines {
			if l == "" && i == len(lines)-1 {
				break
			}
			l = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
			if re.MatchString(l) {
				ms = append(ms, grepMatch{Line: i + 1, Text: shortLine([]byte(l))})
			}
		}
		files = append(files, grepFile{Path: abs, Matches: ms})
	}
	return collect(files)
}

func refGlob(root, pattern string) globOut {
	m, _ := newGlobMatcher(pattern)
	type h struct {
		p   string
		mod time.Time
	}
	var hits []h
	for _, abs := range refWalk(root) {
		rel, _ := filepath.Rel(root, abs)
		if m.match(rel) {
			st, _ := os.Lstat(abs)
			hits = append(hits, h{abs, st.ModTime()})
		}
	}
	slices.SortFunc(hits, func(a, b h) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return strings.Compare(a.p, b.p)
	})
	out := globOut{Root: root, Total: len(hits)}
	for _, x := range hits[:min(len(hits), globLimit)] {
		out.Files = append(out.Files, x.p)
	}
	return out
}

// genTree writes a tree that exercises what a search must get right: names
// whose walk order differs from string order ("a/x" before "a.txt"),
// nested and negated .gitignore rules, VCS directories, binary files (a
// NUL at the start; one past the checked head is text), CRLF lines, no
// final newline, empty files, case variants beyond ASCII (Kelvin sign,
// long s), long lines, files larger than grep's read chunk and a line
// longer than one, and symlinks in and out of the workspace.
func genTree(t *testing.T, rng *rand.Rand) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	words := []string{"alpha", "Beta", "gamma", "Kelvin", "\u212aelvin", "ſtate", "State", "NEEDLE_7", "needle_8",
		"func", "Handler(ctx)", "x", "ab", "a.b", "TODO", "todo:", "日本語", "ΣΊΣΥΦΟΣ", "σίσυφος", "\t", "  ", "é", "É"}
	line := func() string {
		var b strings.Builder
		for range rng.IntN(8) {
			if b.Len() > 0 && rng.IntN(3) > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	text := func() string {
		var b strings.Builder
		nl := "\n"
		if rng.IntN(5) == 0 {
			nl = "\r\n"
		}
		for i := range rng.IntN(40) {
			if i > 0 {
				b.WriteString(nl)
			}
			b.WriteString(line())
		}
		if rng.IntN(4) > 0 {
			b.WriteString(nl)
		}
		return b.String()
	}
	names := []string{"a", "a.txt", "a-b.go", "a/x.go", "A.go", "b.go", "b/.gitignore", "c.log", "keep.log", "..dots.go",
		"main.go", "x.ts", "y.tsx", "gen_a.go", "build/out.go", ".hidden/h.go", "node_modules/m.js", "deep/a/b/c/d.go"}
	for d := range 6 {
		for _, n := range names {
			if n == "b/.gitignore" {
				continue
			}
			if n == "a" {
				continue // a directory (a/x.go) at this level
			}
			write(fmt.Sprintf("d%d/%s", d, n), text())
		}
	}
	for _, n := range names[1:] {
		if n != "b/.gitignore" {
			write(n, text())
		}
	}
	write(".gitignore", "build/\n*.log\n!keep.log\n/only-root.go\nnode_modules\n**/deep/**/c\n")
	write("only-root.go", "NEEDLE_7 at root\n")
	write("d1/only-root.go", "NEEDLE_7 in d1\n")
	write("d2/.gitignore", "gen_*.go\n!gen_a.go\n*.ts\n")
	write("d3/.gitignore", "/a/\n")
	write(".git/config", "NEEDLE_7\n")
	write("d4/.hg/x", "NEEDLE_7\n")
	write("bin0.dat", "NEEDLE_7\x00binary\n")
	write("bin-late.txt", strings.Repeat("z\n", 4100)+"NEEDLE_7\n\x00") // NUL past the head: text
	write("empty.go", "")
	write("long.txt", strings.Repeat("needle_8 ", 200)+"\n")
	write("huge-line.txt", "alpha\n"+strings.Repeat("Beta gamma ", 3000)+"HUGE_END\nState after HUGE_END\n")
	write("many.txt", strings.Repeat("alpha beta\n", 300)) // past the cap alone
	// Lines longer than the search's chunk in TestSearchMatchesReference:
	// with a literal of a pattern at their start, their end, across where
	// a read ends, or none (skipped, not read whole); CRLF, the last line
	// without its newline, and lines after them to count.
	long := 2 * (binaryHead + 811)
	var lines strings.Builder
	lines.WriteString("first NEEDLE_7 Handler(ctx)\n")
	for d := range 10 {
		lines.WriteString(strings.Repeat("s", long-d*3) + "NEEDLE_7 " + strings.Repeat("t", d*37) + "\n")
		lines.WriteString(strings.Repeat("x", long+d*501) + "\r\n")
		lines.WriteString("Beta " + strings.Repeat("y ", long/2+d) + "\n")
		lines.WriteString("NEEDLE_8 state kelvin\n")
	}
	lines.WriteString(strings.Repeat("z", long) + "KELVIN the end")
	write("long-lines.txt", lines.String())
	var big strings.Builder
	for big.Len() < 5*grepChunk {
		big.WriteString(line() + "\n")
	}
	write("big.txt", big.String())
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.go"), []byte("NEEDLE_7 outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"link-in.go":  filepath.Join(root, "main.go"),
		"link-out.go": filepath.Join(outside, "secret.go"),
		"link-dir":    filepath.Join(root, "d0"),
		"dangling.go": filepath.Join(root, "nope"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	// Distinct times, some equal, so glob's order is its rule and not chance.
	at := time.Now().Add(-time.Hour)
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			mt := at.Add(time.Duration(rng.IntN(50)) * time.Second)
			_ = os.Chtimes(p, mt, mt)
		}
		return nil
	})
	return root, outside
}

// randomPattern builds a regexp from pieces that have literals, have none,
// fold case or alternate.
func randomPattern(rng *rand.Rand) string {
	pieces := []string{"NEEDLE_", `\d+`, "(?i)kelvin", "(?i)state", "(?i:ΣΊΣΥΦΟΣ)", "alpha|gamma", `\w+`, "Handler\\(",
		"^", "$", `\b`, "todo:?", "[a-z]+", "x*", ".", `\s`, "日本", "(ab|a\\.b)", "é", "(?i)é", "a.b", `\t`, "(?i)ſ", "e"}
	var b strings.Builder
	for range 1 + rng.IntN(3) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

func TestSearchMatchesReference(t *testing.T) {
	defer func(n int) { grepChunk = n }(grepChunk)
	grepChunk = binaryHead + 811 // lines cross chunks; huge-line.txt is longer than one
	rng := rand.New(rand.NewPCG(21, 0))
	root, _ := genTree(t, rng)
	c := &registry.Call{Cwd: root, Roots: []string{root}}
	ctx := context.Background()

	patterns := []string{"NEEDLE_7", `NEEDLE_\d`, `(?i)needle_\d`, "(?i)kelvin", "(?i)state", `\w+elvin`, "alpha|Beta",
		"^func", `Handler\(ctx\)$`, "x*", "", ".", "(?i)σίσυφος", "日本語", `é\b`, `(?i)É`, "TODO|todo:", "\n",
		"a\nb", `\bab\b`, `HUGE_[A-Z]+`, "alpha", `(?i)ſtate`, `(NEEDLE|needle)_[0-9]`, `[Nn]eedle`, `\x00`,
		// Several pieces every match holds: one is scanned for, the others
		// are checked on the lines it finds (folded ones too).
		`NEEDLE_\d .*Handler\(ctx\)`, `alpha.*(?i)kelvin`, `(?i)state.*todo:`, `func [a-z]+ gamma`, `Beta.*日本語.*a\.b`,
		`(?i:ſtate) \w+ (?i)ΣΊΣΥΦΟΣ`, `gamma.*(alpha|Beta).*TODO`,
		// Long lines (long-lines.txt): found, skipped, counted.
		`s+NEEDLE_7 t*$`, `x+\r$`, `NEEDLE_8`, `(?i)kelvin the`, `y y`, `^Beta`, `z+KELVIN`}
	for range 100 {
		patterns = append(patterns, randomPattern(rng))
	}
	for _, p := range patterns {
		for _, where := range [][2]string{{"", ""}, {"d2", ""}, {"d3/a", ""}, {"", "*.go"}, {"", "*.{ts,tsx}"}} {
			{
				sub, inc := where[0], where[1]
				dir := filepath.Join(root, sub)
				want := refGrep(c, dir, p, inc)
				got, err := runGrep(ctx, c, grepArgs{Pattern: p, Path: dir, Include: inc})
				if err != nil {
					t.Fatalf("grep %q: %v", p, err)
				}
				if cmp.Diff(got, want) != "" {
					t.Errorf("grep %q in %q include %q:\ngot  %s\nwant %s", p, sub, inc, summary(got), summary(want))
				}
			}
		}
	}
	for _, p := range []string{"*.go", "**/*.go", "d*/*.go", "**/a/**", "*", "**", "a*", "{a,b}*.go", "d2/**", "*.{ts,tsx}",
		"deep/**/d.go", "**/b/*", "?.go", "[ab].go", "link-*", "*.log", "only-root.go"} {
		for _, sub := range []string{"", "d2", "d3"} {
			dir := filepath.Join(root, sub)
			want := refGlob(dir, p)
			got, err := runGlob(ctx, c, globArgs{Pattern: p, Path: dir})
			if err != nil {
				t.Fatalf("glob %q: %v", p, err)
			}
			if cmp.Diff(got, want) != "" {
				t.Errorf("glob %q in %q:\ngot  %d %v\nwant %d %v", p, sub, got.Total, got.Files, want.Total, want.Files)
			}
		}
	}
}

func summary(o grepOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d matches capped=%v:", o.Matches, o.Capped)
	for _, f := range o.Files {
		for _, m := range f.Matches {
			fmt.Fprintf(&b, " %s:%d", filepath.Base(f.Path), m.Line)
		}
	}
	return b.String()
}

// The literal sets the prefilter takes are what every match must contain.
func TestLiterals(t *testing.T) {
	tests := []struct {
		pattern string
		want    string // the literals, "i:" marking folded ones; "" for none
	}{
		{`NEEDLE_\d+`, "NEEDLE_"},
		{`\w+Handler\(ctx`, "Handler(ctx"},
		{`(?i)needle_\d`, "i:NEEDLE_"},
		{`(?i)kelvin`, "i:ELVIN"}, // K also matches the Kelvin sign, 3 bytes
		{`(?i)session`, "i:ION"},  // S: ſ
		{`foo|barbaz`, "foo barbaz"},
		{`foo|\w+`, ""},
		{`a`, ""}, // too short to pay
		{`x*abc`, "abc"},
		{`(abc)+d`, "abc"},
		{`(?:abc)?d`, ""},
		{"a\nbc", ""},
		{`[ab]cd`, "cd"},
		{`a|b|c|d|e|f|g|h|i`, ""},
		// Of the pieces every match holds, the one cheapest to scan for:
		// rare anchor bytes, few places to check.
		{`func \w+\(ctx context\.Context\) error`, "(ctx context.Context) error"},
		{`if err := \w+\.Close\(\); err != nil`, ".Close(); err != nil"},
		{`case \w+\.\w+\(\w+\):`, "):"},
		{`panic\("[a-z]+: `, `panic("`}, // ": " stops less often, at far more lines
	}
	for _, tt := range tests {
		var got []string
		if ls := literals(tt.pattern); ls != nil {
			for _, l := range ls.lits {
				s := string(l.s)
				if l.fold {
					s = "i:" + strings.ToUpper(s)
				}
				got = append(got, s)
			}
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("literals(%q) = %q, want %q", tt.pattern, strings.Join(got, " "), tt.want)
		}
	}
}

// The scan looks for the byte whose cases together are rarest: a folded
// literal is not anchored on a space because a space has one case.
func TestLiteralAnchors(t *testing.T) {
	for pattern, want := range map[string]string{
		"(?i)connection refused": "Uu", // u+U are rarer than f+F, c+C; a space is commoner than any
		"NEEDLE_":                "L",
		`\w+Handler\(ctx`:        "H",
		"TODO|FIXME":             "DX",
	} {
		if got := string(literals(pattern).anchors); got != want {
			t.Errorf("anchors of %q = %q, want %q", pattern, got, want)
		}
	}
}

func TestMatchName(t *testing.T) {
	for _, pat := range []string{"main.go", "*.go", "*", "*.", "a*b", "?.go", "[ab].go", `\*.go`, "*[", "", "*.g*"} {
		for _, name := range []string{"main.go", "a.go", ".go", "x.go.bak", "*.go", "ab", "a.", "", "b.go", "[.go"} {
			want, _ := path.Match(pat, name)
			if got := matchName(pat, name); got != want {
				t.Errorf("matchName(%q, %q) = %v, path.Match says %v", pat, name, got, want)
			}
		}
	}
}

// matchSegs is the plain form of matchRel: the path split into segments
// first.
func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 1 {
				return true
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if !matchName(pat[0], segs[0]) {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// matchRel, which walks the path in place, agrees with matching its
// split segments, for every pattern against every path here.
func TestMatchRel(t *testing.T) {
	pats := []string{"a", "a/b", "a/*", "*/b", "**", "**/b", "a/**", "a/**/b", "**/**/b", "a/**/**", "**/a/**",
		"a/**/b/**/c", "*.go", "**/*.go", "x/*.go", "a/b/c", "a/**/b/c", "**/", "a//b", "[ab]/b", "b"}
	paths := []string{"a", "b", "a/b", "a/c", "a/b/c", "a/x/b", "a/x/y/b", "x/main.go", "x/y/main.go", "main.go",
		"a/b/b/c", "a/x/b/y/c", "c/a/d", "", "a/b/", "b/b"}
	for _, p := range pats {
		segs := strings.Split(p, "/")
		for _, rel := range paths {
			want := matchSegs(segs, strings.Split(rel, "/"))
			if got := matchRel(segs, rel); got != want {
				t.Errorf("matchRel(%q, %q) = %v, matching the split path gives %v", p, rel, got, want)
			}
		}
	}
}

// A line longer than the chunk is read whole only when one of the scan's
// literals is in it: a literal that straddles where one read ends and the
// next begins is found all the same, whatever the offset, and the lines
// after it keep their numbers.
func TestLongLineLiteralAcrossReads(t *testing.T) {
	defer func(n int) { grepChunk = n }(grepChunk)
	grepChunk = binaryHead + 811
	dir := t.TempDir()
	c := &registry.Call{Cwd: dir, Roots: []string{dir}}
	lit := "NEEDLE_7"
	for _, at := range []int{grepChunk, 2 * grepChunk, 3 * grepChunk} {
		for d := -len(lit) - 10; d <= 2; d++ {
			x := at + d
			path := filepath.Join(dir, fmt.Sprintf("d%d", x))
			os.Mkdir(path, 0o755)
			text := strings.Repeat("s", x) + lit + "\n" + strings.Repeat("q", 3*grepChunk) + "\n" + "after " + lit + "\n"
			if err := os.WriteFile(filepath.Join(path, "f.txt"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{`s+NEEDLE_7$`, `NEEDLE_\d`, `(?i)needle_7`, `^after`} {
				got, err := runGrep(context.Background(), c, grepArgs{Pattern: p, Path: path})
				if err != nil {
					t.Fatal(err)
				}
				if want := refGrep(c, path, p, ""); cmp.Diff(got, want) != "" {
					t.Errorf("%q in a line with the literal at %d: got %s, want %s", p, x, summary(got), summary(want))
				}
			}
		}
	}
}
