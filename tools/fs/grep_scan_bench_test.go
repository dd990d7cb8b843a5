package fs

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// BenchmarkGrepScan times the regexp path alone (the literal scan, the
// lines it finds, the checks and the regexp on them; no file system) for
// each pattern of testdata/grep-shapes.txt, over up to 64 MB of the Go
// toolchain's own .go files, in grep's chunks. MB/s is the rate of the
// search itself: what the choice of literals changes.
//
//	go test ./tools/fs -run '^$' -bench GrepScan -benchtime 5x
func BenchmarkGrepScan(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip(err)
	}
	var corpus bytes.Buffer
	filepath.WalkDir(filepath.Join(strings.TrimSpace(string(out)), "src"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".go") && corpus.Len() < 64<<20 {
			data, _ := os.ReadFile(p)
			corpus.Write(data)
		}
		return nil
	})
	f, err := os.Open(filepath.Join("testdata", "grep-shapes.txt"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, pattern, ok := strings.Cut(sc.Text(), "\t")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		b.Run(name, func(b *testing.B) {
			s := &searcher{re: regexp.MustCompile(pattern), lits: literals(pattern), limit: 1 << 30}
			if s.lits == nil {
				s.whole = prefilter(pattern)
			}
			data := corpus.Bytes()
			b.SetBytes(int64(len(data)))
			var w scanner
			for b.Loop() {
				for off := 0; off < len(data); off += grepChunk {
					chunk := data[off:min(off+grepChunk, len(data))]
					if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
						chunk = chunk[:i+1] // whole lines, as grep reads
					}
					s.lines(chunk, 1, nil, &w)
				}
			}
		})
	}
}
