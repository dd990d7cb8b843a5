package atomicfile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWriteVisibleMidWrite: with half of the new content written, what the
// directory shows. Into an unnamed file (O_TMPFILE), nothing but the old
// file; where the file system refuses unnamed files, the named temporary
// file, recorded in the journal before it existed. Either way the file ends
// whole, with its mode, and nothing else is left.
func TestWriteVisibleMidWrite(t *testing.T) {
	refuse := func(string) (int, error) { return -1, unix.EOPNOTSUPP }
	for _, c := range []struct {
		name      string
		open      func(string) (int, error)
		wantNamed bool
	}{
		{"unnamed", openUnnamed, false},
		{"refused: EOPNOTSUPP", refuse, true},
		{"refused: EISDIR", func(string) (int, error) { return -1, unix.EISDIR }, true},
		{"refused: EINVAL", func(string) (int, error) { return -1, unix.EINVAL }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			jdir, work := t.TempDir(), t.TempDir()
			if !c.wantNamed && !unnamedWorks(work) {
				t.Skip("this file system refuses O_TMPFILE: the refused cases cover it")
			}
			stop, err := Journal(jdir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			target := filepath.Join(work, "a.txt")
			if err := os.WriteFile(target, []byte("old\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			defer func(o func(string) (int, error)) { openUnnamed = o }(openUnnamed)
			openUnnamed = c.open
			var during []string
			midWrite = func(string) {
				entries, _ := os.ReadDir(work)
				for _, e := range entries {
					during = append(during, e.Name())
				}
			}
			defer func() { midWrite = nil }()
			content := []byte(strings.Repeat("new content\n", 1000))
			if err := Write(target, content); err != nil {
				t.Fatal(err)
			}
			var named []string
			for _, n := range during {
				if n != "a.txt" {
					named = append(named, n)
				}
			}
			if c.wantNamed != (len(named) == 1) || len(named) > 1 {
				t.Errorf("mid-write the directory held %q; want a named temporary file: %v", during, c.wantNamed)
			}
			paths, err := readJournal(filepath.Join(jdir, strconvPid()+journalExt))
			if err != nil || len(paths) != 1 || !ours().MatchString(filepath.Base(paths[0])) {
				t.Errorf("journal %q, %v: want the one temporary name", paths, err)
			}
			if len(named) == 1 && filepath.Base(paths[0]) != named[0] {
				t.Errorf("the journal names %s, the directory showed %s", paths[0], named[0])
			}
			got, err := os.ReadFile(target)
			if err != nil || string(got) != string(content) {
				t.Fatalf("the file after the write: %d bytes, %v", len(got), err)
			}
			if st, _ := os.Stat(target); st.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want 0640 kept", st.Mode().Perm())
			}
			if entries, _ := os.ReadDir(work); len(entries) != 1 {
				t.Errorf("the directory holds %d files after the write, want 1", len(entries))
			}
		})
	}
}

// unnamedWorks reports whether dir's file system makes unnamed files.
func unnamedWorks(dir string) bool {
	fd, err := openUnnamed(dir)
	if err == nil {
		unix.Close(fd)
	}
	return err == nil
}

// TestCleanTwice: the watchdog and the next bridge may both clean a dead
// bridge's journal; the second finds nothing to do and says no error.
func TestCleanTwice(t *testing.T) {
	jdir, work := t.TempDir(), t.TempDir()
	left := filepath.Join(work, ".a.txt.acp-bridge-41-1")
	os.WriteFile(left, []byte("whole"), 0o600)
	j := filepath.Join(jdir, "41"+journalExt)
	os.WriteFile(j, []byte(left+"\n"), 0o600)
	if removed, err := Clean(j); err != nil || len(removed) != 1 {
		t.Fatalf("first clean: %q, %v", removed, err)
	}
	if removed, err := Clean(j); err != nil || len(removed) != 0 {
		t.Fatalf("second clean: %q, %v", removed, err)
	}
}

// TestWatchToldOnce: a write through a named temporary file tells the
// watch the journal's path first, once whatever the number of writes; a
// write into an unnamed file does not (it starts no watchdog).
func TestWatchToldOnce(t *testing.T) {
	jdir, work := t.TempDir(), t.TempDir()
	var told []string
	var mu sync.Mutex
	stop, err := Journal(jdir, func(j string) { mu.Lock(); told = append(told, j); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if unnamedWorks(work) {
		if err := Write(filepath.Join(work, "a.txt"), []byte("unnamed")); err != nil {
			t.Fatal(err)
		}
		if len(told) != 0 {
			t.Fatalf("a write into an unnamed file told the watch %q", told)
		}
	}
	defer func(o func(string) (int, error)) { openUnnamed = o }(openUnnamed)
	openUnnamed = func(string) (int, error) { return -1, unix.EOPNOTSUPP }
	for i := range 3 {
		if err := Write(filepath.Join(work, "a.txt"), []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := filepath.Join(jdir, strconvPid()+journalExt); len(told) != 1 || told[0] != want {
		t.Errorf("told %q, want once %q", told, want)
	}
}
