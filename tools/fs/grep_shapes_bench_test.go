//go:build unix

package fs_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readShapes reads testdata/grep-shapes.txt: the mix of regexp shapes
// both the in-process and the binary benchmark run.
func readShapes(b *testing.B) [][2]string {
	f, err := os.Open(filepath.Join("testdata", "grep-shapes.txt"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, pattern, ok := strings.Cut(sc.Text(), "\t"); ok && !strings.HasPrefix(name, "#") {
			out = append(out, [2]string{name, pattern})
		}
	}
	return out
}

// BenchmarkGrepShapesVsRipgrep runs the mix of testdata/grep-shapes.txt in
// this process against rg on a large Go tree: ACP_BRIDGE_SEARCH_TREE, else
// Go's own source. The binary's figures (cmd/acp-bridge
// BenchmarkBinaryGrepShapes) are the ones to quote; this one is for
// profiling the regexp path:
//
//	go test ./tools/fs -run '^$' -bench GrepShapesVsRipgrep -benchtime 5x -cpuprofile /tmp/cpu.out
func BenchmarkGrepShapesVsRipgrep(b *testing.B) {
	dir := os.Getenv("ACP_BRIDGE_SEARCH_TREE")
	if dir == "" {
		dir = goRootSrc(b)
	}
	for _, c := range readShapes(b) {
		b.Run(c[0], func(b *testing.B) {
			benchVsRipgrepIn(b, dir, "grep", fmt.Sprintf(`{"pattern":%q}`, c[1]), "",
				[]string{"--hidden", "--no-require-git", "-n", "--no-heading", "--color", "never", "-e", c[1], "."})
		})
	}
}

// goRootSrc is the source of the Go toolchain running the tests.
func goRootSrc(b *testing.B) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("no Go tree: set ACP_BRIDGE_SEARCH_TREE (go env: %v)", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "src")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		b.Skipf("no Go tree at %s: set ACP_BRIDGE_SEARCH_TREE", dir)
	}
	return dir
}
