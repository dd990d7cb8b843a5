package atomicfile

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestWriteRecordsItsTempFile: the temporary file's path is in the journal
// before the file exists, and a clean stop removes the journal.
func TestWriteRecordsItsTempFile(t *testing.T) {
	jdir, work := t.TempDir(), t.TempDir()
	stop, err := Journal(jdir, nil)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(work, "a.txt")
	if err := Write(target, []byte("x")); err != nil {
		t.Fatal(err)
	}
	paths, err := readJournal(filepath.Join(jdir, strconvPid()+journalExt))
	if err != nil || len(paths) != 1 {
		t.Fatalf("journal %q, %v; want one path", paths, err)
	}
	if dir, base := filepath.Split(paths[0]); filepath.Clean(dir) != work || !ours().MatchString(base) || !strings.HasPrefix(base, ".a.txt.acp-bridge-") {
		t.Errorf("recorded %q: not a temporary file of a.txt in %s", paths[0], work)
	}
	if entries, _ := os.ReadDir(work); len(entries) != 1 {
		t.Errorf("the workspace holds %d files after a write, want 1", len(entries))
	}
	stop()
	if _, err := os.Stat(filepath.Join(jdir, strconvPid()+journalExt)); !os.IsNotExist(err) {
		t.Errorf("the journal outlived a clean stop: %v", err)
	}
}

// TestSweep: the files a dead process recorded and left are removed; a
// file it recorded but renamed into place, a file with a name it does not
// make, a directory, and anything a live process recorded are kept.
func TestSweep(t *testing.T) {
	jdir, work := t.TempDir(), t.TempDir()
	file := func(name string) string {
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	left := file(".target.txt.acp-bridge-41-12345")
	notOurs := file(".target.txt.acp-bridge-41-x") // recorded, but not a name Write makes
	user := file("target.txt")                     // the target: recorded lines never name it
	dirPath := filepath.Join(work, ".d.acp-bridge-41-7")
	os.Mkdir(dirPath, 0o700)
	liveLeft := file(".b.txt.acp-bridge-42-1")
	os.WriteFile(filepath.Join(jdir, "41"+journalExt), []byte(strings.Join([]string{
		left, notOurs, user, dirPath, filepath.Join(work, ".gone.acp-bridge-41-9"), "relative/.x.acp-bridge-41-1",
		left[:len(left)-2], // a torn last line
	}, "\n")), 0o600)
	os.WriteFile(filepath.Join(jdir, "42"+journalExt), []byte(liveLeft+"\n"), 0o600)
	os.WriteFile(filepath.Join(jdir, "notapid"+journalExt), []byte(user+"\n"), 0o600)

	removed, err := Sweep(jdir, func(pid int) bool { return pid == 42 })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{left}) {
		t.Errorf("removed %q, want only %q", removed, left)
	}
	for _, p := range []string{notOurs, user, dirPath, liveLeft} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(jdir, "41"+journalExt)); !os.IsNotExist(err) {
		t.Error("the dead process's journal was kept")
	}
	if _, err := os.Stat(filepath.Join(jdir, "42"+journalExt)); err != nil {
		t.Error("the live process's journal was removed")
	}
}

func strconvPid() string { return strconv.Itoa(os.Getpid()) }
