// Package staletmp removes what earlier test runs built into the temp dir
// and could not remove themselves: a run that ends in a panic, a -timeout
// or a kill skips the removal at the end of its TestMain, and each leaves a
// built acp-bridge (about 35 MB) behind.
package staletmp

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Age is how old a directory whose owner cannot be told must be before a
// later run removes it: far longer than any run (CI's limit is 90
// minutes), so a run going on beside this one keeps its binary.
const Age = 6 * time.Hour

// MkdirTemp makes a directory in the temp dir as os.MkdirTemp does, its
// name carrying this process's id after prefix (prefix + "<pid>-" +
// random): Sweep then removes it as soon as this process is gone, not
// hours later.
func MkdirTemp(prefix string) (string, error) {
	return os.MkdirTemp("", prefix+strconv.Itoa(os.Getpid())+"-")
}

// Sweep removes the directories in tmp matching any of patterns whose
// owner (the process MkdirTemp named in them) no longer runs, and those
// whose owner cannot be told that were last modified more than Age before
// now.
func Sweep(tmp string, now time.Time, patterns ...string) {
	for _, pattern := range patterns {
		dirs, _ := filepath.Glob(filepath.Join(tmp, pattern))
		for _, d := range dirs {
			fi, err := os.Stat(d)
			if err != nil || !fi.IsDir() {
				continue
			}
			if pid, ok := owner(filepath.Base(d), pattern); ok && !alive(pid) || now.Sub(fi.ModTime()) > Age {
				os.RemoveAll(d)
			}
		}
	}
}

// owner reads the process id MkdirTemp put in name after the pattern's
// fixed prefix (the part before its "*").
func owner(name, pattern string) (int, bool) {
	prefix, _, _ := strings.Cut(pattern, "*")
	digits, _, ok := strings.Cut(strings.TrimPrefix(name, prefix), "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}
