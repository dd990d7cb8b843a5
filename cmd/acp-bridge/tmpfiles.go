package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/acp-bridge/acp-bridge/internal/atomicfile"
	"github.com/acp-bridge/acp-bridge/internal/procgroup"
)

// journalDirs are where the temporary files of edits are recorded: beside
// the session logs, and the temp directory for a bridge without a usable
// state directory. Both are swept at start.
func journalDirs(stateDir string) []string {
	tmp := filepath.Join(os.TempDir(), "acp-bridge-tmpfiles-"+strconv.Itoa(os.Getuid()))
	if stateDir == "" {
		return []string{tmp}
	}
	return []string{filepath.Join(stateDir, "tmpfiles"), tmp}
}

// startJournal records every temporary file this process creates beside a
// file it edits, so the watchdog (told of the journal at its first line)
// or the next bridge can remove one a crash left in the user's project.
// stop removes the journal at a clean exit.
func startJournal(stateDir string, logger *slog.Logger) (stop func()) {
	var errs []any
	for _, d := range journalDirs(stateDir) {
		stop, err := atomicfile.Journal(d, procgroup.WatchJournal)
		if err == nil {
			return stop
		}
		errs = append(errs, "dir", d, "err", err)
	}
	logger.Warn("edits' temporary files are not recorded: one a crash leaves is not removed", errs...)
	return func() {}
}

// sweepTempFiles removes the temporary files that bridges which are gone
// left beside the files they were writing (killed between the write and
// the rename): only files their journals name, with the names they make.
func sweepTempFiles(stateDir string, logger *slog.Logger) {
	for _, d := range journalDirs(stateDir) {
		removed, err := atomicfile.Sweep(d, procgroup.Exists)
		for _, p := range removed {
			logger.Info("removed a temporary file a killed bridge left", "path", p)
		}
		if err != nil {
			logger.Warn("could not remove every temporary file a killed bridge left", "dir", d, "err", err)
		}
	}
}
