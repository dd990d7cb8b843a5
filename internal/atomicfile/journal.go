package atomicfile

import (
	"bufio"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The journal of this process: one file, <dir>/<pid>.tmpfiles, one line per
// temporary file about to be created. It is only appended to (a line is one
// write(2), so a killed process leaves whole lines), and removed at a clean
// exit, when every temporary file is gone.
var journal struct {
	mu    sync.Mutex
	f     *os.File
	watch func(journal string) // told of the journal before the first named temporary file
	told  chan struct{}        // closed when watch has returned; nil until called
}

const journalExt = ".tmpfiles"

// Journal starts recording this process's temporary files in dir (created
// if needed). stop closes and removes the journal; call it at exit. Without
// a journal, Write works the same and a crash may leave a temporary file.
// watch, if not nil, is told the journal's path once, before the first
// named temporary file is created: the watchdog that outlives a killed
// process cleans what the journal lists (see Clean), so a kill during a
// write through a named temporary file leaves nothing for long. A write
// into an unnamed file (Linux) does not call it: starting the watchdog
// costs its process start, about as much CPU as the bridge's own, for a
// name that lasts only from link to rename and holds a whole file, which
// the next start's Sweep removes if a kill lands in that instant.
func Journal(dir string, watch func(journal string)) (stop func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := filepath.Join(dir, strconv.Itoa(os.Getpid())+journalExt)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	journal.mu.Lock()
	journal.f, journal.watch, journal.told = f, watch, nil
	journal.mu.Unlock()
	return func() {
		journal.mu.Lock()
		defer journal.mu.Unlock()
		if journal.f == f {
			journal.f = nil
		}
		f.Close()
		os.Remove(p)
	}, nil
}

// record appends path to the journal, if there is one. A path with a line
// break is refused: the journal could not be read back.
func record(path string) error {
	journal.mu.Lock()
	defer journal.mu.Unlock()
	if journal.f == nil {
		return nil
	}
	if strings.ContainsAny(path, "\n\r") {
		return errors.New("a line break in the path")
	}
	_, err := journal.f.WriteString(path + "\n")
	return err
}

// announce tells watch of the journal, once, and returns when it has been
// told (at once without a journal or watch).
func announce() {
	journal.mu.Lock()
	if journal.f == nil || journal.watch == nil {
		journal.mu.Unlock()
		return
	}
	told := journal.told
	if told != nil {
		journal.mu.Unlock()
		<-told // another write is telling it
		return
	}
	told, watch, name := make(chan struct{}), journal.watch, journal.f.Name()
	journal.told = told
	journal.mu.Unlock()
	defer close(told)
	watch(name)
}

// ours matches the names tempName makes; compiled when a journal is
// replayed, not at start-up.
var ours = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\..+\.acp-bridge-[0-9]+-[0-9]+$`) })

// Sweep removes what processes that are gone left behind: for each journal
// in dir whose process does not run (running reports it), what Clean
// removes. It returns the files removed. A journal of a running process is
// left alone.
func Sweep(dir string, running func(pid int) bool) (removed []string, err error) {
	names, err := filepath.Glob(filepath.Join(dir, "*"+journalExt))
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, j := range names {
		pid, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(j), journalExt))
		if err != nil || pid <= 0 || pid == os.Getpid() || running(pid) {
			continue
		}
		r, err := Clean(j)
		removed = append(removed, r...)
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}

// Clean removes what the journal j lists of a process that is gone: every
// file that still exists, is a regular file and has a name this package
// makes, then the journal itself. The watchdog of a killed bridge calls it
// (cmd/acp-bridge/reaper.go), and so does the next bridge's Sweep: one may
// find the other's work done, which is no error.
func Clean(j string) (removed []string, err error) {
	paths, err := readJournal(j)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, p := range paths {
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() || !ours().MatchString(filepath.Base(p)) {
			continue // renamed into place, removed, or not ours
		}
		if err := os.Remove(p); err != nil {
			if !errors.Is(err, iofs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		removed = append(removed, p)
	}
	if err := os.Remove(j); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}

func readJournal(p string) ([]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var paths []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if l := sc.Text(); filepath.IsAbs(l) {
			paths = append(paths, l)
		}
	}
	return paths, sc.Err()
}
