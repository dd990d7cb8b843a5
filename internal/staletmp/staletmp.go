// Package staletmp removes what earlier test runs built into the temp dir
// and could not remove themselves: a run that ends in a panic, a -timeout
// or a kill skips the removal at the end of its TestMain, and each leaves a
// built acp-bridge (about 35 MB) behind.
package staletmp

import (
	"os"
	"path/filepath"
	"time"
)

// Age is how old such a directory must be before a later run removes it:
// far longer than any run (CI's limit is 90 minutes), so a run going on
// beside this one keeps its binary.
const Age = 6 * time.Hour

// Sweep removes the directories in tmp matching any of patterns that were
// last modified more than Age before now.
func Sweep(tmp string, now time.Time, patterns ...string) {
	for _, pattern := range patterns {
		dirs, _ := filepath.Glob(filepath.Join(tmp, pattern))
		for _, d := range dirs {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() && now.Sub(fi.ModTime()) > Age {
				os.RemoveAll(d)
			}
		}
	}
}
