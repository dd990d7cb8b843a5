//go:build unix

package fs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

// benchTree writes files files of ~2 KB source-like text (197 MB for
// 100,000), 1,000 per directory, with a needle in every 10,000th file.
func benchTree(b *testing.B, files int) string {
	b.Helper()
	dir := b.TempDir()
	var body strings.Builder
	for i := range 30 {
		fmt.Fprintf(&body, "func handler%d(w http.ResponseWriter, r *http.Request) { return }\n", i)
	}
	plain := []byte(body.String())
	needle := []byte(body.String() + "// NEEDLE_42 found here\n")
	for i := range files {
		d := filepath.Join(dir, fmt.Sprintf("pkg%03d", i/1000))
		if i%1000 == 0 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		data := plain
		if i%10_000 == 0 {
			data = needle
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.go", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("vendor/\n*.tmp\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

func rssMiB(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return float64(ru.Maxrss) / 1024
}

// BenchmarkGrep100k searches a 100,000-file tree for a rare needle (the
// whole tree is read: no early stop). Warm page cache.
//
//	go test ./tools/fs -run '^$' -bench 'Grep100k|Glob100k' -benchmem -benchtime 5x
func BenchmarkGrep100k(b *testing.B) {
	benchSearch(b, "grep", `{"pattern":"NEEDLE_\\d+"}`, "Found 10 matches in 10 files")
}

// BenchmarkGlob100k lists the same tree by pattern, newest first.
func BenchmarkGlob100k(b *testing.B) {
	benchSearch(b, "glob", `{"pattern":"**/f*0.go"}`, "(Showing the 100 most recently modified of 10000 matching files")
}

func benchSearch(b *testing.B, tool, args, want string) {
	dir := benchTree(b, 100_000)
	r := registry.New()
	fs.Register(r)
	d := r.NewScope().Get(tool)
	p := pipeline.New(nil)
	b.ResetTimer()
	for b.Loop() {
		res := p.Execute(b.Context(), d, &registry.Call{Name: tool, Args: []byte(args), Cwd: dir, Roots: []string{dir}})
		if res.IsError || !strings.Contains(res.Text(), want) {
			b.Fatalf("%s", res.Text()[:min(len(res.Text()), 300)])
		}
	}
	b.ReportMetric(rssMiB(b), "peakRSS-MiB")
}

// BenchmarkGrepLargeFile searches one 8 MB file, 32 read chunks: where
// counting lines costs most next to the search. no-literal: a pattern with
// no literal to scan for, one match per chunk (every line is looked at);
// rare-literal: one match, on the last line.
//
//	go test ./tools/fs -run '^$' -bench GrepLargeFile -benchtime 10x
func BenchmarkGrepLargeFile(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "big.go")
	var body strings.Builder
	lines := 0
	for body.Len() < 8<<20 {
		lines++
		if lines%4000 == 0 {
			fmt.Fprintf(&body, "\tid := %07dz // marked\n", lines)
			continue
		}
		fmt.Fprintf(&body, "\tw.Header().Set(\"X-Line\", strconv.Itoa(%d)) // filler text\n", lines)
	}
	lines++
	body.WriteString("// NEEDLE_42 at the end\n")
	if err := os.WriteFile(path, []byte(body.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, pattern, want string }{
		{"no-literal", `\d{7}z`, fmt.Sprintf("Found %d matches", (lines-1)/4000)},
		{"rare-literal", `NEEDLE_\d+`, fmt.Sprintf("%d: // NEEDLE_42", lines)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := registry.New()
			fs.Register(r)
			d := r.NewScope().Get("grep")
			p := pipeline.New(nil)
			args := fmt.Sprintf(`{"pattern":%q,"path":%q}`, bc.pattern, path)
			for b.Loop() {
				res := p.Execute(b.Context(), d, &registry.Call{Name: "grep", Args: []byte(args), Cwd: dir, Roots: []string{dir}})
				if res.IsError || !strings.Contains(res.Text(), bc.want) {
					b.Fatalf("want %q in %s", bc.want, res.Text()[:min(len(res.Text()), 300)])
				}
			}
		})
	}
}
