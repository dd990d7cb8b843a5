package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/acp-bridge/acp-bridge/registry"
)

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	names, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(names)
}

// Grep keeps each directory open until its files are opened by name in
// it, and closes every one it held, whether the search reads the whole
// tree, stops at the cap, is cancelled, or holds more directories than its
// budget (the rest are opened by their whole path). Not parallel: it
// counts the process's descriptors.
func TestGrepClosesTheDirectoriesItHolds(t *testing.T) {
	root := t.TempDir()
	const dirs, files = 40, 4
	for d := range dirs {
		for f := range files {
			p := filepath.Join(root, fmt.Sprintf("d%02d", d), fmt.Sprintf("s%d", d%3), fmt.Sprintf("f%d.txt", f))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(strings.Repeat("a hit here\n", 3)+"rare\n"), 0o644)
		}
	}
	call := &registry.Call{Cwd: root, Roots: []string{root}}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name    string
		pattern string
		budget  int32
		ctx     context.Context
		found   int // matches in the result
		err     bool
	}{
		{"the whole tree", `rare`, 256, context.Background(), dirs * files, false},
		{"stopped at the cap", `a hit`, 256, context.Background(), grepLimit, false},
		{"over the budget", `rare`, 1, context.Background(), dirs * files, false},
		{"none held", `rare`, 0, context.Background(), dirs * files, false},
		{"over the budget, stopped at the cap", `a hit`, 2, context.Background(), grepLimit, false},
		{"cancelled", `rare`, 256, cancelled, 0, true},
	}
	// A first search, so whatever the runtime opens once is open before
	// the count.
	if _, err := runGrep(context.Background(), call, grepArgs{Pattern: "rare"}); err != nil {
		t.Fatal(err)
	}
	before := openFDs(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func(b int32) { maxHeldDirs = b }(maxHeldDirs)
			maxHeldDirs = c.budget
			out, err := runGrep(c.ctx, call, grepArgs{Pattern: c.pattern})
			if (err != nil) != c.err {
				t.Fatalf("err %v, want an error: %v", err, c.err)
			}
			n := 0
			for _, f := range out.Files {
				n += len(f.Matches)
			}
			if n != c.found {
				t.Errorf("%d matches, want %d", n, c.found)
			}
			if after := openFDs(t); after != before {
				t.Errorf("%d descriptors open after the search, %d before", after, before)
			}
		})
	}
}

// A directory's file is opened by name without following a symlink: one
// put in place of a listed file since the listing is refused, not
// followed.
func TestOpenInDirectoryRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "file"), []byte("x\n"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(dir, "link"))
	d, err := openDirectory(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	var buf []byte
	fd, err := d.open("file", &buf)
	if err != nil {
		t.Fatalf("open file: %v", err)
	}
	syscall.Close(fd)
	if fd, err := d.open("link", &buf); !errors.Is(err, syscall.ELOOP) {
		if err == nil {
			syscall.Close(fd)
		}
		t.Errorf("open link: %v, want ELOOP", err)
	}
}
