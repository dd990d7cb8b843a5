//go:build unix

package fs_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

// srcTreeVersion names the cached tree; change it when the generator changes.
const srcTreeVersion = "acp-bridge-srctree-v1"

// srcTree returns a tree of about 10,000 Go-like source files (~150 MB):
// 20 services of 25 packages of 20 files, each 10–20 KB of functions with
// varied identifiers, plus what a search must skip: a .gitignore'd vendor/
// and build output, a .git directory, and binary files. One file in 500
// holds "NEEDLE_<n>". The tree is generated once into the temp directory
// and reused (the name carries a version; a marker file says it is whole),
// because writing 150 MB takes longer than the benchmark.
func srcTree(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(os.TempDir(), srcTreeVersion)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	tmp := dir + fmt.Sprintf(".tmp%d", os.Getpid())
	writeSrcTree(tb, tmp, 20, 25, 20)
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		tb.Fatal(err)
	}
	return dir
}

var srcWords = strings.Fields(`request response handler server client config session
	buffer reader writer token parser state event stream cache index record entry
	value result error context option manager worker queue channel lock table
	schema field column filter policy router module plugin message payload`)

// goSource writes one Go-like file of roughly size bytes.
func goSource(rng *rand.Rand, pkg string, size int, needle int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Package %s is generated for benchmarks.\npackage %s\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"strings\"\n)\n\n", pkg, pkg)
	word := func() string { return srcWords[rng.IntN(len(srcWords))] }
	title := func() string { w := word(); return strings.ToUpper(w[:1]) + w[1:] }
	for n := 0; b.Len() < size; n++ {
		name := title() + title() + fmt.Sprint(n)
		fmt.Fprintf(&b, "// %s turns a %s into a %s, keeping the %s.\n", name, word(), word(), word())
		fmt.Fprintf(&b, "func %s(ctx context.Context, %s *%s, %s []string) (%s, error) {\n", name, word(), title(), word()+"s", title())
		for range 3 + rng.IntN(8) {
			switch rng.IntN(5) {
			case 0:
				fmt.Fprintf(&b, "\tif err := %s.%s(ctx); err != nil {\n\t\treturn nil, fmt.Errorf(\"%s: %%w\", err)\n\t}\n", word(), title(), word())
			case 1:
				fmt.Fprintf(&b, "\tfor i, %s := range %s {\n\t\t%s[i] = strings.TrimSpace(%s)\n\t}\n", word(), word()+"s", word(), word())
			case 2:
				fmt.Fprintf(&b, "\t%s := %s.New%s(%d)\n", word(), word(), title(), rng.IntN(1000))
			case 3:
				fmt.Fprintf(&b, "\t// %s the %s before the %s is %s.\n", title(), word(), word(), word())
			default:
				fmt.Fprintf(&b, "\tdefer %s.Close()\n", word())
			}
		}
		if needle >= 0 && n == 3 {
			fmt.Fprintf(&b, "\t// NEEDLE_%d marks this function.\n", needle)
		}
		fmt.Fprintf(&b, "\treturn %s{}, nil\n}\n\n", title())
	}
	return b.Bytes()
}

func writeSrcTree(tb testing.TB, dir string, services, pkgs, files int) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	write := func(rel string, data []byte) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	write(".git/HEAD", []byte("ref: refs/heads/main\n"))
	write(".gitignore", []byte("vendor/\n/build/\n*.pb.bin\n"))
	n := 0
	for s := range services {
		for p := range pkgs {
			pkg := fmt.Sprintf("pkg%02d", p)
			for f := range files {
				needle := -1
				if n%500 == 0 {
					needle = n
				}
				write(fmt.Sprintf("svc%02d/%s/file%02d.go", s, pkg, f), goSource(rng, pkg, 10<<10+rng.IntN(10<<10), needle))
				n++
			}
		}
		// Ignored or binary: never searched, never listed.
		write(fmt.Sprintf("svc%02d/vendor/lib/lib.go", s), goSource(rng, "lib", 8<<10, 999999))
		write(fmt.Sprintf("svc%02d/assets/logo.pb.bin", s), append([]byte("NEEDLE_1\x00"), make([]byte, 4<<10)...))
		write(fmt.Sprintf("svc%02d/assets/blob.dat", s), append([]byte("\x00\x01NEEDLE_2"), make([]byte, 4<<10)...))
	}
	write("build/out.go", goSource(rng, "out", 8<<10, 999998))
}

// medianDur is the median of ds (sorted in place).
func medianDur(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// cpuTime is the process's user and system time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchVsRipgrep runs the tool and, when rg is installed, ripgrep on the
// same tree, alternately in each iteration, so both see the same machine.
// It reports each one's median wall time and median CPU time (the tool's
// is this process's during the call; rg's its own, all threads), and the
// ratios. On a shared machine the CPU ratio is the steadier one.
func benchVsRipgrep(b *testing.B, tool, args, want string, rgArgs []string) {
	benchVsRipgrepIn(b, srcTree(b), tool, args, want, rgArgs)
}

func benchVsRipgrepIn(b *testing.B, dir, tool, args, want string, rgArgs []string) {
	r := registry.New()
	fs.Register(r)
	d := r.NewScope().Get(tool)
	p := pipeline.New(nil)
	rg, _ := exec.LookPath("rg")
	if rgArgs == nil {
		rg = "" // no comparison
	}
	run := func() {
		res := p.Execute(b.Context(), d, &registry.Call{Name: tool, Args: []byte(args), Cwd: dir, Roots: []string{dir}})
		if res.IsError || !strings.Contains(res.Text(), want) {
			b.Fatalf("%s", res.Text()[:min(len(res.Text()), 300)])
		}
	}
	run() // warm the page cache
	var toolT, toolCPU, rgT, rgCPU []time.Duration
	for b.Loop() {
		t0, c0 := time.Now(), cpuTime(b)
		run()
		toolT, toolCPU = append(toolT, time.Since(t0)), append(toolCPU, cpuTime(b)-c0)
		if rg != "" {
			b.StopTimer()
			cmd := exec.Command(rg, rgArgs...)
			cmd.Dir = dir
			t0 := time.Now()
			if out, err := cmd.Output(); err != nil && len(out) == 0 && cmd.ProcessState.ExitCode() != 1 {
				b.Fatalf("rg: %v", err) // 1 is "no match"
			}
			rgT = append(rgT, time.Since(t0))
			rgCPU = append(rgCPU, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			b.StartTimer()
		}
	}
	ms := func(ds []time.Duration) float64 { return float64(medianDur(ds).Microseconds()) / 1000 }
	b.ReportMetric(ms(toolT), "tool-ms")
	b.ReportMetric(ms(toolCPU), "tool-cpu-ms")
	if len(rgT) > 0 {
		b.ReportMetric(ms(rgT), "rg-ms")
		b.ReportMetric(ms(rgCPU), "rg-cpu-ms")
		b.ReportMetric(ms(toolT)/ms(rgT), "x-rg")
		b.ReportMetric(ms(toolCPU)/ms(rgCPU), "x-rg-cpu")
	}
}

// BenchmarkGrepVsRipgrep searches the source tree for a rare regexp with
// the grep tool and with ripgrep, side by side (rg's half is skipped when
// it is not installed). rg is run as a search tool would: respecting
// .gitignore, hidden files included (the tool searches them), line numbers.
//
//	go test ./tools/fs -run '^$' -bench VsRipgrep -benchtime 20x
func BenchmarkGrepVsRipgrep(b *testing.B) {
	cases := []struct{ name, pattern, want string }{
		{"literal-prefix", `NEEDLE_\d+`, "Found 20 matches in 20 files"},
		{"inner-literal", `\w+Lock\d+\(ctx context\.Context, token \*Cache`, "Found 4 matches in 4 files"},
		{"ignore-case", `(?i)needle_\d+ MARKS`, "Found 20 matches in 20 files"},
		{"alternation", `NEEDLE_\d+|TODO\(bench\)`, "Found 20 matches in 20 files"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			benchVsRipgrep(b, "grep", fmt.Sprintf(`{"pattern":%q}`, c.pattern), c.want,
				[]string{"--hidden", "-n", "--no-heading", "--color", "never", "-e", c.pattern, "."})
		})
	}
}

// BenchmarkGrepCapped searches for a pattern on most lines: the first 250
// matches by path are known after a few files, and the search stops there
// (ripgrep has no such limit, so there is no comparison). What it measures
// is how little is read past that point.
func BenchmarkGrepCapped(b *testing.B) {
	benchVsRipgrep(b, "grep", `{"pattern":"func \\w+\\(ctx"}`, "Found more than 250 matches", nil)
}

// BenchmarkGlobVsRipgrep lists the tree's Go files with glob, newest
// first, and with rg --files: as it lists (no stat, no order), and sorted
// newest first as glob is (--sortr modified: a stat per file, one thread).
func BenchmarkGlobVsRipgrep(b *testing.B) {
	for _, c := range []struct {
		name string
		rg   []string
	}{
		{"files", []string{"--hidden", "--files", "-g", "*.go", "."}},
		{"files-sorted", []string{"--hidden", "--files", "--sortr", "modified", "-g", "*.go", "."}},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchVsRipgrep(b, "glob", `{"pattern":"**/*.go"}`, "of 10000 matching files", c.rg)
		})
	}
}

// moduleTree is the tree of the through-the-binary benchmarks
// (cmd/acp-bridge/search_bench_test.go): ACP_BRIDGE_SEARCH_TREE, else the
// Go module cache.
func moduleTree(b *testing.B) string {
	dir := os.Getenv("ACP_BRIDGE_SEARCH_TREE")
	if dir == "" {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			b.Skip("no tree: set ACP_BRIDGE_SEARCH_TREE")
		}
		dir = strings.TrimSpace(string(out))
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		b.Skipf("no tree at %q: set ACP_BRIDGE_SEARCH_TREE, or run go mod download", dir)
	}
	return dir
}

// BenchmarkGrepMixVsRipgrep is the in-process twin of cmd/acp-bridge's
// BenchmarkBinaryGrep: the same patterns on the same tree, the tool called
// through the pipeline in this warm process (no process start, no
// protocol), against rg. The binary's figure is the one to quote; this one
// is for profiling (-cpuprofile).
//
//	go test ./tools/fs -run '^$' -bench GrepMixVsRipgrep -benchtime 10x
func BenchmarkGrepMixVsRipgrep(b *testing.B) {
	dir := moduleTree(b)
	for _, c := range []struct{ name, pattern, include string }{
		{"common-then-rare", `func [A-Z]\w*Context\(`, ""},
		{"rare-literal", `NEEDLE_\d+`, ""},
		{"alternation", `TODO|FIXME`, ""},
		{"ignore-case-words", `(?i)connection refused`, ""},
		{"word-boundary", `\bSprintf\b`, ""},
		{"plain-string", `ParseDuration`, ""},
		{"leading-class", `[A-Z][a-z]+Schema\(`, ""},
		{"thousands-of-lines", `return nil, err`, ""},
		{"include-go", `func \(\w+ \*\w+\) Close\(\)`, "*.go"},
	} {
		b.Run(c.name, func(b *testing.B) {
			rg := []string{"--hidden", "--no-require-git", "-n", "--no-heading", "--color", "never", "-e", c.pattern, "."}
			args := fmt.Sprintf(`{"pattern":%q}`, c.pattern)
			if c.include != "" {
				rg = append(rg[:len(rg)-3], "-g", c.include, "-e", c.pattern, ".")
				args = fmt.Sprintf(`{"pattern":%q,"include":%q}`, c.pattern, c.include)
			}
			benchVsRipgrepIn(b, dir, "grep", args, "", rg)
		})
	}
}

// BenchmarkGlobMixVsRipgrep is the in-process twin of BenchmarkBinaryGlob.
func BenchmarkGlobMixVsRipgrep(b *testing.B) {
	dir := moduleTree(b)
	for _, c := range []struct{ name, pattern, rg string }{
		{"all-go", "**/*.go", "*.go"},
		{"go-mod", "**/go.mod", "go.mod"},
		{"testdata-json", "**/testdata/**/*.json", "**/testdata/**/*.json"},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchVsRipgrepIn(b, dir, "glob", fmt.Sprintf(`{"pattern":%q}`, c.pattern), "",
				[]string{"--hidden", "--no-require-git", "--files", "-g", c.rg, "."})
		})
	}
}
